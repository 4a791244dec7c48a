/**
 * How a campaign is paced: its maintenance windows (open now or not, when they close and when
 * they next open), its ramp (rate, factor, maximum, step length: each step is one of the
 * batches below), and its settings as Control resolved them (reconnect timeout, config grace,
 * soak, concurrency, disruption budget, download budget, max defer, on breach, progress
 * deadline).
 */
import { html } from "htm/preact";
import { type Campaign, OnBreach } from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import type { WindowState } from "../../proto/gen/agentcontrol/admin/v1/campaign_waits_pb.js";
import { formatMs, formatTime, msOf } from "../format.js";

const rate = (perMinute: number) => `${Number(perMinute.toFixed(2))}/min`;

function WindowLine({ state }: { state: WindowState | undefined }) {
  if (!state) return null;
  if (state.open) {
    return html`<p class="window-state" data-open="true">
      Open now${state.closesAt && html`, closes ${formatTime(state.closesAt)}`}${state.nextOpensAt && html`; next opens ${formatTime(state.nextOpensAt)}`}
    </p>`;
  }
  return html`<p class="window-state" data-open="false">
    Closed: nothing new is offered${state.nextOpensAt ? html`; opens ${formatTime(state.nextOpensAt)}` : " and no opening within a week"}
  </p>`;
}

/** Props of {@link CampaignSchedule}. */
export interface CampaignScheduleProps {
  readonly campaign: Campaign;
  /** The windows' state now (undefined without windows, or once the campaign is finished). */
  readonly window: WindowState | undefined;
}

/** The windows, the ramp and the pacing settings of `campaign`. */
export function CampaignSchedule({ campaign, window }: CampaignScheduleProps) {
  const spec = campaign.spec;
  const windows = spec?.windows ?? [];
  const ramp = spec?.ramp;
  const orDefault = (ms: number, fallback: string) => (ms > 0 ? formatMs(ms) : fallback);
  return html`<section class="schedule">
    <h3>Windows</h3>
    ${
      windows.length === 0
        ? html`<p class="muted windows-none">None: it may offer at any time.</p>`
        : html`<ul class="windows">${windows.map((w) => html`<li key=${w}><code>${w}</code></li>`)}</ul>
          <${WindowLine} state=${window} />`
    }
    ${
      ramp &&
      html`<h3>Ramp</h3>
      <p class="ramp" data-steps=${campaign.batches.length}>
        ${rate(ramp.startPerMinute)} ×${ramp.factor || 2}${ramp.maxPerMinute > 0 ? `, at most ${rate(ramp.maxPerMinute)}` : ""}, each step at least ${orDefault(msOf(ramp.step), "the policy minimum")}: ${campaign.batches.length} steps (the batches below)
      </p>`
    }
    <h3>Settings</h3>
    <dl class="facts settings">
      <dt>On breach</dt><dd>${(OnBreach[spec?.onBreach || OnBreach.ROLLBACK] ?? "").toLowerCase()}</dd>
      <dt>Concurrency</dt><dd>${spec?.concurrency ? spec.concurrency : "whole batch"}</dd>
      <dt>Disruption budget</dt><dd>${spec?.disruptionBudgetPercent ?? 5}% per pool</dd>
      <dt>Downloads at once</dt><dd>${spec?.maxDownloads ? spec.maxDownloads : "no limit"}</dd>
      <dt>Max defer</dt><dd>${formatMs(msOf(spec?.maxDefer))}</dd>
      <dt>Reconnect timeout</dt><dd>${formatMs(msOf(spec?.reconnectTimeout))}</dd>
      <dt>Config grace</dt><dd>${formatMs(msOf(spec?.configGrace))}</dd>
      <dt>Soak</dt><dd>${formatMs(msOf(spec?.soak))}</dd>
      <dt>Progress deadline</dt><dd>${orDefault(msOf(spec?.progressDeadline), "default")}</dd>
    </dl>
  </section>`;
}
