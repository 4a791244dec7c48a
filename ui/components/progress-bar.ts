/**
 * One bar of a set of nodes: succeeded, in flight, failed and skipped segments in that order,
 * the rest (waiting) left empty. Each segment says its count in its title.
 */
import { html } from "htm/preact";
import type { NodeStateCount } from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { NodeState } from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { countIn, FAILED_STATES, IN_FLIGHT_STATES, SKIPPED_STATES } from "../format.js";

/** The four segments of a bar, counted from `counts`. */
export function segmentsOf(counts: readonly NodeStateCount[]) {
  return {
    succeeded: countIn(counts, [NodeState.SUCCEEDED]),
    inFlight: countIn(counts, IN_FLIGHT_STATES),
    failed: countIn(counts, FAILED_STATES),
    skipped: countIn(counts, SKIPPED_STATES),
  };
}

/** Props of {@link ProgressBar}. */
export interface ProgressBarProps {
  readonly counts: readonly NodeStateCount[];
  readonly total: number;
}

/** The bar; its data attributes carry the counts. */
export function ProgressBar({ counts, total }: ProgressBarProps) {
  const s = segmentsOf(counts);
  const width = (n: number) => `${total > 0 ? (100 * n) / total : 0}%`;
  const part = (kind: string, n: number) =>
    n > 0 &&
    html`<span class=${`seg ${kind}`} style=${{ width: width(n) }} title=${`${kind} ${n}`}></span>`;
  return html`<div
    class="bar"
    role="img"
    aria-label=${`${s.succeeded} succeeded, ${s.inFlight} in flight, ${s.failed} failed, ${s.skipped} skipped of ${total}`}
    data-succeeded=${s.succeeded}
    data-in-flight=${s.inFlight}
    data-failed=${s.failed}
    data-skipped=${s.skipped}
    data-total=${total}
  >
    ${part("succeeded", s.succeeded)}${part("in-flight", s.inFlight)}${part("failed", s.failed)}${part("skipped", s.skipped)}
  </div>`;
}
