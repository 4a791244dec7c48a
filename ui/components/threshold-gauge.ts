/**
 * How close a batch is to its failure threshold: the failed share of its offerable nodes as a
 * bar, the threshold as a line across it, and in words what the failures mean for it
 * ({@link thresholdText}: how many more breach it, or that it passed).
 */
import { html } from "htm/preact";
import type { BatchStatus } from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { thresholdStanding, thresholdText } from "../threshold.js";

/** Props of {@link ThresholdGauge}. */
export interface ThresholdGaugeProps {
  readonly batch: BatchStatus;
  readonly thresholdPercent: number;
}

/** The gauge of one batch. */
export function ThresholdGauge({ batch, thresholdPercent }: ThresholdGaugeProps) {
  const { ratio, allowed, breached } = thresholdStanding(batch, thresholdPercent);
  // The scale shows twice the threshold (at least 10 %), so the line sits mid-way.
  const scale = Math.max(10, 2 * thresholdPercent, ratio);
  const text = thresholdText(batch, thresholdPercent);
  return html`<div class=${`gauge${breached ? " breached" : ""}`} data-allowed=${allowed} data-failed=${batch.failed}>
    <div class="gauge-track">
      <span class="gauge-fill" style=${{ width: `${(100 * ratio) / scale}%` }}></span>
      <span class="gauge-line" style=${{ left: `${(100 * thresholdPercent) / scale}%` }} title=${`threshold ${thresholdPercent}%`}></span>
    </div>
    <span class="gauge-text">${text}</span>
  </div>`;
}
