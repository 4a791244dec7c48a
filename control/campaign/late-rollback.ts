/**
 * Late rollbacks: the rollback of a FINISHED campaign's rolled-back batch that reaches a node
 * after the campaign ended (docs/decisions.md, "Late rollbacks are admitted under their pool's
 * disruption budget"). Two sources:
 *
 * - a rollback the campaign sent while it rolled back and its agent never reported on (it was
 *   away; the campaign judged it `rollback_unconfirmed`), still in the outbox;
 * - a rollback left in the outbox when the batch's rollback ended ({@link leaveLateRollbacks}),
 *   for a node the campaign offered the upgrade that ended in a state a rollback may reach and
 *   was sent none: it said FAILED (or was canceled, skipped), so the engine judged it off the
 *   target, yet its agent may restart into the target and say Hello on it after the end.
 *
 * Either is delivered only once the node's latest Hello is on the campaign's target (it runs
 * it; on any other version there is nothing to roll back), unless the node belongs to a campaign
 * created later or its previous release is yanked (`resend-rules.ts`), and only while its pool
 * has room under its disruption budget ({@link admitLateRollbacks}), counting every unfinished
 * campaign's slots and the late rollbacks in flight. Once delivered, it holds a slot of its
 * pool's budget ({@link lateRollbackHoldsSlot}) until its agent reports on it (REINSTATED,
 * FAILED, REFUSED) or says Hello on its previous release, or one reconnect timeout after the
 * later of its admission and its agent's latest report on it: a finished campaign holds no slot
 * of its own, so without this the agent restarted outside every budget (known defect 34). A
 * re-send while it holds its slot goes in it without extending it; once the slot ended, a
 * re-send is admitted again, under the budget.
 *
 * Both store adapters apply these functions to their rows (`CampaignStore.unackedOperations`
 * admits, `CampaignTransaction.poolLoads` counts), so they never disagree.
 */
import { poolLimit } from "./batch-rules.js";
import { CONTROL_CLOCK_DISAGREEMENT_MS } from "./control-clocks.js";
import type { Draft } from "./draft.js";
import { batchNodes, emit } from "./draft.js";
import type { CampaignNode } from "./model.js";
import { NODE_STATE_TRAITS } from "./node-state-traits.js";
import { operationId } from "./operation-id.js";

/**
 * True for a node of a batch whose rollback ends that is left a late rollback: the campaign
 * offered it the upgrade, it ended in a final state a rollback may be sent to with its state
 * kept (the `while_rollback_pending` rows of the traits table: failed, timed_out, skipped,
 * canceled), and it was sent no rollback, nor withheld one (its previous release yanked).
 */
export function leftLateRollback(n: CampaignNode): boolean {
  return (
    NODE_STATE_TRAITS[n.state].holdsSlot === "while_rollback_pending" &&
    n.upgradeOperationId !== undefined &&
    n.rollbackOperationId === undefined &&
    n.rollbackResult === undefined
  );
}

/**
 * Leaves a late rollback in the outbox for each node of `batch` that {@link leftLateRollback}
 * and whose previous release is not yanked, as the batch's rollback ends: emitted as a rollback
 * action marked `late`, which the worker writes to the outbox and never sends with the decision.
 * The node's record is left as it is: the rollback's end never waits for it, and the campaign
 * finishes as it would have.
 */
export function leaveLateRollbacks(d: Draft, batch: number, why: string): void {
  for (const n of batchNodes(d, batch)) {
    if (!leftLateRollback(n)) continue;
    if (n.previousVersion !== undefined && d.yankedPrevious.has(n.previousVersion)) continue;
    emit(d, {
      kind: "rollback",
      nodeId: n.nodeId,
      operationId: operationId(d.campaign.id, n.nodeId, "rollback"),
      version: n.previousVersion,
      reason: why,
      late: true,
    });
  }
}

/** The report phases by which an agent says it is done with a rollback (back on its release, or not). */
export const ROLLBACK_DONE_PHASES: readonly string[] = ["REINSTATED", "FAILED", "REFUSED"];

/** A rollback operation of a finished campaign, as the stores read it for the rules of this file. */
export interface LateRollbackRow {
  readonly operationId: string;
  readonly nodeId: string;
  /** The node's pool in its campaign. */
  readonly pool: string;
  /** When it was last admitted as a late rollback (epoch ms; `late_sent_at`); undefined: never. */
  readonly deliveredAt: number | undefined;
  /** The phase of its agent's latest report on it, if any. */
  readonly reportPhase: string | undefined;
  /** When that report was received (epoch ms). */
  readonly reportAt: number | undefined;
  /** The version of the node's latest Hello (its registry row), if known. */
  readonly nodeVersion: string | undefined;
  /** The release the rollback restores (the node's previous version in its campaign). */
  readonly previousVersion: string | undefined;
  /** Its campaign's reconnect timeout. */
  readonly reconnectTimeoutMs: number;
}

/**
 * True while a late rollback holds a slot of its pool's disruption budget at `now`: delivered,
 * its agent has not reported being done with it ({@link ROLLBACK_DONE_PHASES}) nor said Hello on
 * its previous release, and one reconnect timeout, plus {@link CONTROL_CLOCK_DISAGREEMENT_MS},
 * has not passed since the later of its delivery and its agent's latest report on it. Those two
 * stamps are written by whichever Control delivered or received, and `now` is the reader's: the
 * margin keeps a reader whose clock is ahead from ending the slot early.
 */
export function lateRollbackHoldsSlot(r: LateRollbackRow, now: number): boolean {
  if (r.deliveredAt === undefined) return false;
  if (r.reportPhase !== undefined && ROLLBACK_DONE_PHASES.includes(r.reportPhase)) return false;
  if (r.previousVersion !== undefined && r.nodeVersion === r.previousVersion) return false;
  const since = Math.max(r.deliveredAt, r.reportAt ?? r.deliveredAt);
  return now < since + r.reconnectTimeoutMs + CONTROL_CLOCK_DISAGREEMENT_MS;
}

/**
 * True when a finished campaign's unacknowledged rollback is wanted at all: the node's latest
 * Hello is on the campaign's `target` (it runs the release the rollback undoes).
 */
export function lateRollbackWanted(nodeVersion: string | undefined, target: string): boolean {
  return nodeVersion === target;
}

/** A late rollback that may be delivered now, with its campaign's budget. */
export interface LateRollbackCandidate extends LateRollbackRow {
  /** Its campaign's `disruptionBudgetPercent`. */
  readonly budgetPercent: number;
}

/** A pool's size and its slots held at once, every unfinished campaign's and late rollbacks'. */
export interface PoolHeld {
  readonly size: number;
  readonly held: number;
}

/** What {@link admitLateRollbacks} decided. */
export interface LateAdmission {
  /** The candidates to deliver now. */
  readonly deliver: ReadonlySet<string>;
  /**
   * Those of them that take a new slot: the store stamps them delivered at `now`. The others
   * go again in the slot they hold, which a re-send does not extend.
   */
  readonly admitted: ReadonlySet<string>;
}

/**
 * Which of `candidates` (in the order given: the outbox's) may be delivered at `now`. One that
 * holds its slot ({@link lateRollbackHoldsSlot}: delivered, not done with) goes again in it,
 * without extending it: an agent that holds the rollback and says nothing keeps the slot one
 * reconnect timeout from its admission, never for as long as it is re-sent. Any other is
 * admitted only while its pool holds fewer than `poolLimit(size, its campaign's budget)` slots,
 * and then takes one (so two candidates of one pool never share the last slot). `pools` gives
 * each pool's size and the slots held in it at `now`, that of every unfinished campaign
 * (`inFlight`) and of every late rollback holding one.
 */
export function admitLateRollbacks(
  candidates: readonly LateRollbackCandidate[],
  pools: ReadonlyMap<string, PoolHeld>,
  now: number,
): LateAdmission {
  const held = new Map<string, number>();
  const deliver = new Set<string>();
  const admitted = new Set<string>();
  for (const c of candidates) {
    if (lateRollbackHoldsSlot(c, now)) {
      deliver.add(c.operationId);
      continue;
    }
    const pool = pools.get(c.pool) ?? { size: 0, held: 0 };
    const inPool = held.get(c.pool) ?? pool.held;
    if (inPool >= poolLimit(pool.size, c.budgetPercent)) continue;
    held.set(c.pool, inPool + 1);
    deliver.add(c.operationId);
    admitted.add(c.operationId);
  }
  return { deliver, admitted };
}
