/**
 * One batch of a campaign: its share and state, a progress bar of its nodes, how close it is
 * to the failure threshold, and while it runs the time left of its minimum duration as the
 * campaign's waits say it ({@link batchCountdown}: a closed window or a pause is named).
 */
import { html } from "htm/preact";
import type { BatchStatus, Campaign } from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import type { GetCampaignWaitsResponse } from "../../proto/gen/agentcontrol/admin/v1/campaign_waits_pb.js";
import { batchCountdown } from "../batch-countdown.js";
import { batchStateName, formatCounts, thresholdOf } from "../format.js";
import { ProgressBar } from "./progress-bar.js";
import { ThresholdGauge } from "./threshold-gauge.js";

/** Props of {@link BatchRow}. */
export interface BatchRowProps {
  readonly campaign: Campaign;
  readonly batch: BatchStatus;
  /** The campaign's latest waits (undefined while loading and once it is finished). */
  readonly waits: GetCampaignWaitsResponse | undefined;
  /** Milliseconds since `waits` arrived. */
  readonly sinceWaitsMs: number;
}

/** The row of one batch. */
export function BatchRow({ campaign, batch, waits, sinceWaitsMs }: BatchRowProps) {
  const current = batch.index === campaign.currentBatch;
  const state = batchStateName(batch.state);
  return html`<li
    class=${`batch batch-${state}${current ? " current" : ""}`}
    data-batch=${batch.index}
    data-state=${state}
  >
    <div class="batch-head">
      <strong>Batch ${batch.index + 1}</strong>
      <span>${batch.percent}%</span>
      <span class=${`badge state-${state}`}>${state.replace("_", " ")}</span>
      <span class="muted">${batch.nodeCount} node${batch.nodeCount === 1 ? "" : "s"}</span>
      <span class="muted countdown">${batchCountdown({ batch, waits, sinceWaitsMs })}</span>
    </div>
    <${ProgressBar} counts=${batch.counts} total=${batch.nodeCount} />
    <div class="batch-foot">
      <${ThresholdGauge} batch=${batch} thresholdPercent=${thresholdOf(campaign)} />
      <span class="muted counts">${formatCounts(batch.counts)}</span>
    </div>
  </li>`;
}
