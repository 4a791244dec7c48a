/**
 * Carry-over (internal to decide): a node still deferring when the rest of its batch is ready to
 * pass goes into the next batch, the one that starts as this one passes, so one busy node does not
 * hold the fleet for its max defer (docs/decisions.md, "A node still deferring when the rest of its
 * batch is done carries over to the next batch"). Always the next batch, never one further: every
 * rule that reaches a batch's nodes only while it runs (offers and re-offers at the retry time,
 * skipping at the max defer, seeing a later delivery the Agent took, a breach's cancel and
 * rollback) then reaches the carried node too. With a ramp a step never holds more than its rate
 * allows (R1): the next step makes room by moving nodes it has not offered yet, its last in canary
 * order, to the first later step with room.
 */

import { deferredMessage, deferredReason } from "./deferral.js";
import type { BatchMove, Draft } from "./draft.js";
import { activeNodes, batchNodes, moveToBatches, tallyOf, waitingNodes } from "./draft.js";
import type { BatchRecord, CampaignNode } from "./model.js";
import { rampStepLimit } from "./ramp.js";

/** A node and the later batch it goes to. */
export interface CarryMove {
  readonly node: CampaignNode;
  readonly to: number;
}

/** What the pass of a batch carries over ({@link carryOverPlan}). */
export interface CarryOverPlan {
  /** The passing batch's deferring nodes: each goes to the next batch. */
  readonly carried: readonly CampaignNode[];
  /** With a ramp, nodes of the next step not offered yet, each moved on to make room. */
  readonly makingRoom: readonly CarryMove[];
}

/** Nothing to carry over. */
export const NO_CARRY: CarryOverPlan = { carried: [], makingRoom: [] };

/**
 * The carry-over of running batch `b`, the current one, whose nodes still waiting all deferred:
 * they go to the next batch; with a ramp whose next step has no room left for them, that step's
 * last nodes not offered yet (in canary order) move on to the first later step with room, so no
 * step holds more than its rate allows. {@link NO_CARRY} when nothing waits. Undefined when the
 * batch must wait for them instead, as it did before carry-over: a waiting node never deferred (it
 * waits for its first offer); there is no next batch (the last batch passes only once all its
 * nodes are final); the ramp leaves no room for them in the later steps; or no node of the batch
 * took the upgrade yet (none failed or is verifying: the batch would pass on nothing, and a canary
 * batch exists to judge the release before the next one). The pass decides whether the batch is
 * otherwise ready (`judge-batch.ts`).
 */
export function carryOverPlan(d: Draft, b: BatchRecord): CarryOverPlan | undefined {
  if (tallyOf(d, b.index).waiting === 0) return NO_CARRY;
  const carried = waitingNodes(d, b.index);
  if (carried.some((n) => n.deferredAt === undefined)) return undefined;
  const judged =
    tallyOf(d, b.index).failed > 0 || activeNodes(d, b.index).some((n) => n.state === "verifying");
  if (!judged) return undefined;
  const next = b.index + 1;
  const { batches } = d.campaign;
  const nextBatch = batches[next];
  if (nextBatch === undefined) return undefined;
  const { ramp } = d.campaign.spec;
  if (ramp === undefined) return { carried, makingRoom: [] };
  const over = nextBatch.nodeCount + carried.length - rampStepLimit(ramp, next);
  if (over <= 0) return { carried, makingRoom: [] };
  // The next step's nodes not offered yet, its last in canary order first.
  const movable = batchNodes(d, next)
    .filter((n) => n.state === "waiting" && n.offeredAt === undefined)
    .reverse();
  if (movable.length < over) return undefined;
  const taken = new Map<number, number>();
  const makingRoom: CarryMove[] = [];
  for (const node of movable.slice(0, over)) {
    let to: number | undefined;
    for (let j = next + 1; j < batches.length && to === undefined; j++) {
      const room = rampStepLimit(ramp, j) - (batches[j]?.nodeCount ?? 0);
      if ((taken.get(j) ?? 0) < room) to = j;
    }
    if (to === undefined) return undefined;
    taken.set(to, (taken.get(to) ?? 0) + 1);
    makingRoom.push({ node, to });
  }
  return { carried, makingRoom };
}

/**
 * Carries out `plan` ({@link moveToBatches}, in one pass). Each carried node becomes a node of
 * the next batch, still waiting with its deferral (first deferral, retry time, count) as it was,
 * so it is offered there at its retry time within that batch's slots and budgets, counts in that
 * batch's threshold, is rolled back or canceled with that batch, and ends skipped `deferred` once
 * its max defer from its first deferral has passed; `carriedFrom` and its message say where it
 * came from. A node moved to make room is a node of its later step as if planned there.
 */
export function carryOver(d: Draft, plan: CarryOverPlan): void {
  const moves: BatchMove[] = plan.makingRoom.map(({ node, to }) => ({
    node,
    to,
    patch: {},
    reason: `making room in batch ${node.batch + 1} for a node carried over into it`,
  }));
  for (const node of plan.carried) {
    const from = node.carriedFrom ?? node.batch;
    moves.push({
      node,
      to: node.batch + 1,
      patch: { carriedFrom: from, message: deferredMessage(deferredReason(node), from) },
      reason: `carried over: still deferring when the rest of batch ${node.batch + 1} was ready to pass`,
    });
  }
  moveToBatches(d, moves);
}
