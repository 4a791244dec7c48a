/**
 * One campaign, live: what it does and where it stands, the plan it belongs to, what it waits
 * for, its windows, ramp, settings and gates (after the end, the results of the batch it
 * ended in), a row per batch (the running one's countdown read from the same waits as "Waits
 * for"), an operator's buttons, the
 * failing nodes and the campaign's audit trail. Follows the WatchCampaign stream
 * until the campaign is finished, so nothing needs a reload.
 */
import { html } from "htm/preact";
import type { Campaign } from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { formatCounts, formatTime, isFinished, thresholdOf } from "../format.js";
import { useSession } from "../session.js";
import { useCampaignWaits } from "../use-campaign-waits.js";
import { useCampaignWatch } from "../use-campaign-watch.js";
import { useNow } from "../use-now.js";
import { AuditTable } from "./audit-table.js";
import { BatchRow } from "./batch-row.js";
import { CampaignActions } from "./campaign-actions.js";
import { CampaignGates } from "./campaign-gates.js";
import { CampaignPlanLink } from "./campaign-plan-link.js";
import { CampaignSchedule } from "./campaign-schedule.js";
import { CampaignWaits } from "./campaign-waits.js";
import { ErrorLine } from "./error-line.js";
import { FailingNodes } from "./failing-nodes.js";
import { PhaseBadge } from "./phase-badge.js";

function stopLine(c: Campaign) {
  if (c.code === "" && c.message === "") return null;
  const node = c.stoppedByNodeId ? ` (node ${c.stoppedByNodeId})` : "";
  return html`<p class="stopped" role="status"><code>${c.code}</code> ${c.message}${node}</p>`;
}

/**
 * What changes when the engine writes audit events (phase and batch transitions), so the
 * audit trail is read again then, not on every node's step.
 */
function milestone(c: Campaign): string {
  return `${c.phase}/${c.currentBatch}/${c.batches.map((b) => b.state).join(",")}`;
}

/**
 * The parts read from the campaign's waits (one GetCampaignWaits answer): what it waits for,
 * its windows and gates, and the batches with the countdown of the running one.
 */
function Judged({ campaign, now }: { campaign: Campaign; now: number }) {
  const { api } = useSession();
  const waits = useCampaignWaits(api, campaign);
  const finished = isFinished(campaign);
  return html`<${CampaignWaits} data=${finished ? undefined : waits.data} error=${waits.error} finished=${finished} />
    <${CampaignSchedule} campaign=${campaign} window=${finished ? undefined : waits.data?.window} />
    <${CampaignGates} campaign=${campaign} gates=${waits.data?.gates} finished=${finished} />
    <h3>Batches</h3>
    <ol class="batches">
      ${campaign.batches.map(
        (b) =>
          html`<${BatchRow} key=${b.index} campaign=${campaign} batch=${b} waits=${finished ? undefined : waits.data} sinceWaitsMs=${now - waits.receivedAt} />`,
      )}
    </ol>`;
}

/** The page of campaign `id`. */
export function CampaignPage({ id }: { id: string }) {
  const { api } = useSession();
  const watch = useCampaignWatch(api, id);
  const now = useNow();
  const c = watch.campaign;
  if (!c) {
    return html`<section>
      <h2>Campaign ${id}</h2>
      <${ErrorLine} error=${watch.error} />
      ${!watch.error && html`<p class="muted">Loading…</p>`}
    </section>`;
  }
  const live = isFinished(c) ? "finished" : watch.reconnecting ? "reconnecting" : "live";
  return html`<section class="campaign" data-campaign=${c.id} data-phase-now=${c.phase}>
    <div class="campaign-head">
      <h2>Campaign ${c.id}</h2>
      <${PhaseBadge} phase=${c.phase} />
      <span class=${`live live-${live}`} title=${watch.reconnecting ?? ""}>${live}</span>
    </div>
    <dl class="facts">
      <dt>Version</dt><dd>${c.spec?.targetVersion}</dd>
      <dt>Nodes</dt><dd>${c.nodeCount}</dd>
      <dt>Threshold</dt><dd>${thresholdOf(c)}% per batch</dd>
      <dt>Reason</dt><dd>${c.spec?.reason || "-"}</dd>
      <dt>Started</dt><dd>${formatTime(c.createdAt)} by ${c.createdBy}</dd>
      <dt>Finished</dt><dd>${formatTime(c.finishedAt)}</dd>
      ${c.retryOf && html`<dt>Retry of</dt><dd><a href=${`#/campaigns/${c.retryOf}`}>${c.retryOf}</a></dd>`}
      <dt>Nodes by state</dt><dd>${formatCounts(c.counts)}</dd>
    </dl>
    <${CampaignPlanLink} id=${c.id} />
    ${stopLine(c)}
    <${CampaignActions} campaign=${c} />
    <${ErrorLine} error=${watch.error} />
    <${Judged} campaign=${c} now=${now} />
    <${FailingNodes} campaign=${c} />
    <h3>Audit trail</h3>
    <${AuditTable} campaignId=${c.id} version=${milestone(c)} />
  </section>`;
}
