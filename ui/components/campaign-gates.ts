/**
 * A campaign's outside health gates: each as the admin API shows it (a webhook only by its
 * origin), with its latest result for the current batch (status, value, when), its grace,
 * and whether it counts as failing now. Once the campaign is finished, the results of the
 * batch it ended in (the one a gate breached, or its last), read once more.
 */
import { html } from "htm/preact";
import type { Campaign } from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import type { GateState } from "../../proto/gen/agentcontrol/admin/v1/campaign_waits_pb.js";
import { formatMs, formatTime, msOf } from "../format.js";

/** Props of {@link CampaignGates}. */
export interface CampaignGatesProps {
  readonly campaign: Campaign;
  /** The gates' latest results for the current batch (undefined while loading). */
  readonly gates: readonly GateState[] | undefined;
  /** True once the campaign is finished: the results are those of the batch it ended in. */
  readonly finished: boolean;
}

/** The gates table; nothing for a campaign without gates. */
export function CampaignGates({ campaign, gates, finished }: CampaignGatesProps) {
  const texts = campaign.spec?.gates ?? [];
  if (texts.length === 0) return null;
  const grace = msOf(campaign.spec?.gateGrace) || 60_000;
  const rows =
    gates ??
    texts.map((_, index) => ({ index, text: "", status: "", value: "", at: undefined }) as const);
  return html`<section class="gates">
    <h3>Gates</h3>
    ${finished && html`<p class="muted gates-batch">Results of batch ${campaign.currentBatch + 1}, where the campaign ended.</p>`}
    <table class="gates">
      <thead><tr><th>#</th><th>Gate</th><th>Last result</th><th>Value</th><th>At</th><th>Grace</th></tr></thead>
      <tbody>
        ${rows.map((g) => {
          const failing = "failing" in g && g.failing;
          return html`<tr key=${g.index} data-gate=${g.index} data-status=${g.status || "none"} data-failing=${String(failing)}>
            <td>${g.index + 1}</td>
            <td><code>${g.text || texts[g.index]}</code></td>
            <td class=${`gate-status ${g.status}${failing ? " failing" : ""}`}>${g.status || (gates ? (finished ? "not judged" : "not judged yet") : "-")}${failing ? " (failing)" : ""}</td>
            <td>${g.value || "-"}</td>
            <td>${formatTime(g.at)}</td>
            <td>${formatMs(grace)}</td>
          </tr>`;
        })}
      </tbody>
    </table>
  </section>`;
}
