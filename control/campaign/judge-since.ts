/**
 * Which active nodes a round of the decision judges (internal to decide). Judging a node reads
 * its record, its facts, the judging context (`JudgedMark` in `judged-mark.ts`) and whether `now` reached
 * one of its deadlines, nothing else. So once a round judged every active node under a context
 * without a change, judging one again under the same context changes nothing unless its record
 * changed since (`Draft.touched`), its facts did (`Draft.factsSince`), or `now` crossed one of
 * its deadlines since the mark's time: only those are judged. Any other context, a mark from a
 * later time, or no mark at all: every active node is judged (the full path, which the
 * incremental one must always equal).
 */
import { assertNever } from "./assert-never.js";
import type { Draft } from "./draft.js";
import { activeNodes, judgedDeadline } from "./draft.js";
import { REVERT_REPORT_GRACE_MS } from "./judge-node.js";
import type { CampaignNode } from "./model.js";
import { rollbackDeadlineOf } from "./rollback-verdict.js";

/** The judging context of the draft as it stands: what a node's verdict reads besides its own. */
export function judgingContext(d: Draft): string {
  const c = d.campaign;
  const b = c.batches[c.currentBatch];
  return [
    c.phase,
    c.currentBatch,
    b?.state ?? "",
    d.target.version,
    d.readyAt,
    c.spec.reconnectTimeoutMs,
    c.spec.configGraceMs,
  ].join("|");
}

/**
 * True when `now` reached, after `since`, a deadline the judging of `n` compares it with: the
 * reconnect deadline while upgrading, the end of a restarting node's time to report why it came
 * back on another version, the config grace end while verifying, the rollback deadline while
 * rolling back (each as judged, {@link judgedDeadline}).
 */
function deadlineCrossed(d: Draft, n: CampaignNode, since: number): boolean {
  let t: number | undefined;
  switch (n.state) {
    case "offered":
    case "applying":
      t = n.reconnectDeadline === undefined ? undefined : judgedDeadline(d, n.reconnectDeadline);
      break;
    case "restarting":
      if (
        n.revertSeenAt !== undefined &&
        crossed(n.revertSeenAt + REVERT_REPORT_GRACE_MS, d, since)
      )
        return true;
      t = n.reconnectDeadline === undefined ? undefined : judgedDeadline(d, n.reconnectDeadline);
      break;
    case "verifying":
      t = n.graceEndsAt;
      break;
    case "rolling_back":
      t = rollbackDeadlineOf(d, n);
      t = t === undefined ? undefined : judgedDeadline(d, t);
      break;
    // No deadline of a waiting or final node is judged.
    case "waiting":
    case "succeeded":
    case "failed":
    case "timed_out":
    case "skipped":
    case "canceled":
    case "rolled_back":
    case "rollback_failed":
      t = undefined;
      break;
    default:
      return assertNever(n.state, "node state");
  }
  return t !== undefined && crossed(t, d, since);
}

/** True when `t` lies after `since` and at or before the draft's `now`. */
const crossed = (t: number, d: Draft, since: number): boolean => t > since && t <= d.now;

/**
 * The active nodes this round judges, in canary order: all of them without a valid mark, else
 * those touched, with changed facts, or with a deadline crossed since the mark. On the
 * incremental path it then records that every active node is judged at `now` under the
 * current context (what the round changes is touched again, for the next round); on the full
 * path it keeps no mark.
 */
export function nodesToJudge(d: Draft): CampaignNode[] {
  const mark = d.judgedUnder;
  if (mark === undefined) return activeNodes(d);
  const context = judgingContext(d);
  let out: CampaignNode[];
  if (d.now < mark.at || mark.context !== context) out = activeNodes(d);
  else {
    d.activeSorted ??= [...d.active].sort((a, b) => a - b);
    out = [];
    for (const i of d.activeSorted) {
      const n = d.records[i] as CampaignNode;
      if (d.touched.has(i) || d.factsSince.has(n.nodeId) || deadlineCrossed(d, n, mark.at)) {
        out.push(n);
      }
    }
  }
  d.judgedUnder = { at: d.now, context };
  d.factsSince = NONE;
  d.touched.clear();
  return out;
}

const NONE: ReadonlySet<string> = new Set();
