/**
 * A node back on the target that goes away before its batch passes (internal to decide). A
 * release that kills its host minutes after it starts must not pass a batch: while such a node
 * is not online its batch does not pass (`judgePass`), and one not back within the reconnect
 * timeout of when it was first seen offline is a failure of its batch, `lost_after_upgrade`.
 *
 * This is a rule of the batch, run every round over the current batch's verifying nodes, and
 * not a rule of the node judged incrementally (`judge-since.ts`): a change of liveness alone
 * need not be reported to the decision, so only a full look sees a node go offline.
 */
import type { Draft } from "./draft.js";
import { activeNodes, currentBatch, factsOf, judgedDeadline, updateNode } from "./draft.js";
import type { CampaignNode } from "./model.js";
import { isEndedPhase } from "./model.js";
import { minutes } from "./reports.js";

/**
 * When a verifying node first seen offline at `awaySince` is lost if still not online (before
 * {@link judgedDeadline}); undefined while it is not away.
 */
export function lostDeadline(d: Draft, n: CampaignNode): number | undefined {
  return n.awaySince === undefined ? undefined : n.awaySince + d.campaign.spec.reconnectTimeoutMs;
}

/**
 * Judges the verifying nodes of the current batch while it may still pass or is held after a
 * breach (running or paused campaign; batch running or breached), and while the campaign ended
 * before the batch passed (aborted without rollback, stopped: its nodes then settle as they
 * stand, and one away is not succeeded, `judgeVerifying`), as a node's config failure
 * is: online → its `awaySince` cleared; offline (or without facts: offline, nothing known) and
 * not yet away → `awaySince` = now; away and still not online (offline, or reconnecting after
 * this Control's restart) at its lost deadline (never within a reconnect timeout of this
 * Control becoming ready) → failed `lost_after_upgrade`, which counts toward the batch's
 * threshold as any failure does. A node merely reconnecting (its stream gone, not offline
 * yet) is not counted away: it holds the pass without a deadline until it is offline.
 */
export function judgeAway(d: Draft): void {
  const c = d.campaign;
  const b = currentBatch(d);
  const mayPass =
    (c.phase === "running" || c.phase === "paused") &&
    (b.state === "running" || b.state === "breached");
  if (!mayPass && !isEndedPhase(c.phase)) return;
  for (const n of activeNodes(d, b.index)) {
    if (n.state !== "verifying") continue;
    const f = factsOf(d, n.nodeId);
    // Revoked: skipped by judging the node (`judge-node.ts`), never lost.
    if (f?.revoked === true) continue;
    if (f?.online === true) {
      if (n.awaySince !== undefined) updateNode(d, n, { awaySince: undefined }, "online again");
      continue;
    }
    const deadline = lostDeadline(d, n);
    if (deadline === undefined) {
      if (f === undefined || f.offline) {
        updateNode(d, n, { awaySince: d.now }, "offline after coming back on the target");
      }
      continue;
    }
    if (d.now < judgedDeadline(d, deadline)) continue;
    updateNode(
      d,
      n,
      {
        state: "failed",
        code: "lost_after_upgrade",
        message: `came back on ${d.target.version}, then went offline and was not back within ${minutes(c.spec.reconnectTimeoutMs)}`,
      },
      "lost after the upgrade",
    );
  }
}
