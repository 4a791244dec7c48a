/**
 * How close a batch is to its failure threshold: the failed share of its offerable nodes as a
 * bar, the threshold as a line across it, and in words how many more failures breach it.
 */
import { html } from "htm/preact";
import type { BatchStatus } from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { thresholdStanding } from "../threshold.js";

/** Props of {@link ThresholdGauge}. */
export interface ThresholdGaugeProps {
  readonly batch: BatchStatus;
  readonly thresholdPercent: number;
}

/** The gauge of one batch. */
export function ThresholdGauge({ batch, thresholdPercent }: ThresholdGaugeProps) {
  const { ratio, allowed, breached, left } = thresholdStanding(batch, thresholdPercent);
  // The scale shows twice the threshold (at least 10 %), so the line sits mid-way.
  const scale = Math.max(10, 2 * thresholdPercent, ratio);
  const text = breached
    ? `${batch.failed} of ${batch.offerable} failed (${ratio.toFixed(1)}%): over the ${thresholdPercent}% threshold`
    : `${batch.failed} of ${batch.offerable} failed (${ratio.toFixed(1)}%), threshold ${thresholdPercent}%: ${left} more failure${left === 1 ? "" : "s"} breach${left === 1 ? "es" : ""} it`;
  return html`<div class=${`gauge${breached ? " breached" : ""}`} data-allowed=${allowed} data-failed=${batch.failed}>
    <div class="gauge-track">
      <span class="gauge-fill" style=${{ width: `${(100 * ratio) / scale}%` }}></span>
      <span class="gauge-line" style=${{ left: `${(100 * thresholdPercent) / scale}%` }} title=${`threshold ${thresholdPercent}%`}></span>
    </div>
    <span class="gauge-text">${text}</span>
  </div>`;
}
