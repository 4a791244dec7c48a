/**
 * One batch of a campaign: its share and state, a progress bar of its nodes, how close it is
 * to the failure threshold, and the time left of its minimum duration while it runs.
 */
import { html } from "htm/preact";
import {
  BatchState,
  type BatchStatus,
  type Campaign,
  CampaignPhase,
} from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { batchStateName, formatCounts, formatMs, msOf, thresholdOf } from "../format.js";
import { ProgressBar } from "./progress-bar.js";
import { ThresholdGauge } from "./threshold-gauge.js";

/** Props of {@link BatchRow}. */
export interface BatchRowProps {
  readonly campaign: Campaign;
  readonly batch: BatchStatus;
  /** Milliseconds since the campaign's last update arrived. */
  readonly sinceUpdateMs: number;
}

function timeLeft(campaign: Campaign, batch: BatchStatus, sinceUpdateMs: number): string {
  if (batch.state !== BatchState.RUNNING) return "";
  const running = campaign.phase === CampaignPhase.RUNNING;
  const left = msOf(batch.minDuration) - msOf(batch.elapsed) - (running ? sinceUpdateMs : 0);
  if (left <= 0) return "minimum duration reached";
  return `${formatMs(left)} of ${formatMs(msOf(batch.minDuration))} left${running ? "" : " (paused)"}`;
}

/** The row of one batch. */
export function BatchRow({ campaign, batch, sinceUpdateMs }: BatchRowProps) {
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
      <span class="muted">${timeLeft(campaign, batch, sinceUpdateMs)}</span>
    </div>
    <${ProgressBar} counts=${batch.counts} total=${batch.nodeCount} />
    <div class="batch-foot">
      <${ThresholdGauge} batch=${batch} thresholdPercent=${thresholdOf(campaign)} />
      <span class="muted counts">${formatCounts(batch.counts)}</span>
    </div>
  </li>`;
}
