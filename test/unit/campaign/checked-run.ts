/**
 * A simulated campaign run with every invariant the engine promises checked at each decision
 * (offers, budgets, skips, final states, breaches, rollbacks, confirmations, idempotence), and
 * at its end that it finished (or paused) and rolled back what it had to.
 */
import { expect } from "vitest";
import type { CampaignNode } from "../../../control/campaign/index.js";
import { applyDecision, decide } from "../../../control/campaign/index.js";
import { recordViolations, transitionViolations } from "../../../simulation/record-invariants.js";
import { refInFlight, refPoolLimit } from "../../../simulation/reference/pools.js";
import {
  REF_ENDED_PHASES,
  REF_FAILURE_STATES,
  REF_FINAL_STATES,
  REF_UPGRADING_STATES,
  refBreached,
  refCount,
} from "../../../simulation/reference/threshold.js";
import type { Scenario, Step } from "./sim.js";
import { simulate } from "./sim.js";

/** Every invariant the engine promises, checked on one decision. */
function checkStep(step: Step, running: Map<number, number>, offered: Set<string>): void {
  // The record invariants (I1, I2, I3, I6, W1, W2, R1, G1), the same the simulation checks,
  // judged by the reference models; and below, more of the same, never by the engine's functions.
  expect(recordViolations(step.after.campaign, step.after.nodes)).toEqual([]);
  expect(transitionViolations(step.before, step.after)).toEqual([]);
  const { before, after, decision, now } = step;
  const c = after.campaign;
  const spec = c.spec;
  const byId = new Map(after.nodes.map((n) => [n.nodeId, n]));
  const current = after.nodes.filter((n) => n.batch === c.currentBatch);

  // Offers only in the current batch, once per node, never to a disabled node.
  for (const a of decision.actions) {
    const n = byId.get(a.nodeId)!;
    if (a.kind === "upgrade") {
      expect(step.facts.get(a.nodeId)?.disabled, `offered disabled ${a.nodeId}`).not.toBe(true);
      expect(n.batch, `offer outside the current batch: ${a.nodeId}`).toBe(c.currentBatch);
      expect(offered.has(a.nodeId), `offered twice: ${a.nodeId}`).toBe(false);
      offered.add(a.nodeId);
    }
    // Only the current batch is rolled back.
    if (a.kind === "rollback") expect(n.batch).toBe(c.currentBatch);
  }
  for (const n of after.nodes) {
    if (n.state === "rolling_back" || n.state === "rolled_back" || n.state === "rollback_failed") {
      expect(n.batch).toBe(c.currentBatch);
    }
  }

  // In flight ≤ concurrency, and within each pool's budget. A rollback is held back by
  // neither: a batch may send more nodes back at once than its limits allow (those verifying
  // past their grace hold no slot until then). Nodes rolling back hold slots, so no offer is
  // made over them: the upgrades in flight always fit, and all in flight fit when it offers.
  const offers = decision.actions.some((a) => a.kind === "upgrade");
  const counted = (n: (typeof after.nodes)[number]) =>
    refInFlight(n, now) && (offers || n.state !== "rolling_back");
  const flying = current.filter(counted);
  expect(flying.length).toBeLessThanOrEqual(
    spec.concurrency === 0 ? Number.POSITIVE_INFINITY : spec.concurrency,
  );
  // Counting the other campaigns' nodes in flight in the pool (I5): an offer never pushes the
  // pool over its budget; the others may free slots or take more, this campaign never does.
  const poolSize = new Map<string, number>();
  for (const n of after.nodes) poolSize.set(n.pool, (poolSize.get(n.pool) ?? 0) + 1);
  for (const [pool, own] of poolSize) {
    const load = step.pools?.get(pool);
    const limit = refPoolLimit(load?.size ?? own, spec.disruptionBudgetPercent);
    const inPool = after.nodes.filter((n) => n.pool === pool && counted(n)).length;
    expect(inPool, `pool ${pool}`).toBeLessThanOrEqual(limit);
    const offeredHere = decision.actions.some(
      (a) => a.kind === "upgrade" && byId.get(a.nodeId)?.pool === pool,
    );
    if (offeredHere) {
      expect(
        inPool + (load?.inFlightElsewhere ?? 0),
        `pool ${pool} over its budget`,
      ).toBeLessThanOrEqual(limit);
    }
  }

  // Only offline nodes (or nodes never seen) are skipped as offline; a reconnecting one never is.
  const beforeById = new Map(before.nodes.map((n) => [n.nodeId, n]));
  for (const n of after.nodes) {
    if (n.code !== "node_offline" || beforeById.get(n.nodeId)?.code === "node_offline") continue;
    const f = step.facts.get(n.nodeId);
    expect(f === undefined || f.offline, `skipped ${n.nodeId} as offline while not offline`).toBe(
      true,
    );
  }

  // Only disabled nodes are skipped as disabled.
  for (const n of after.nodes) {
    if (n.code !== "node_disabled" || beforeById.get(n.nodeId)?.code === "node_disabled") continue;
    expect(step.facts.get(n.nodeId)?.disabled, `skipped ${n.nodeId} as disabled`).toBe(true);
  }

  // A final state never changes (I6): only an operation sent to it afterwards (its batch's
  // rollback or confirm) and that rollback's outcome are recorded on it, once. An ended phase never changes.
  const unannotated = (n: CampaignNode) => ({
    ...n,
    rollbackOperationId: undefined,
    rollbackAt: undefined,
    rollbackBootId: undefined,
    rollbackDeadline: undefined,
    rollbackResult: undefined,
    confirmOperationId: undefined,
  });
  for (const n of before.nodes) {
    if (!REF_FINAL_STATES.has(n.state)) continue;
    const later = byId.get(n.nodeId)!;
    expect(unannotated(later), `final node ${n.nodeId} changed`).toEqual(unannotated(n));
    for (const k of [
      "rollbackOperationId",
      "rollbackAt",
      "rollbackBootId",
      "rollbackDeadline",
      "rollbackResult",
      "confirmOperationId",
    ] as const) {
      if (n[k] !== undefined) expect(later[k]).toBe(n[k]);
    }
  }
  if (REF_ENDED_PHASES.has(before.campaign.phase)) expect(c.phase).toBe(before.campaign.phase);

  // A breach always leads to rollback / pause / stop, never to the next batch.
  for (const e of decision.events) {
    if (e.kind !== "breached") continue;
    expect(c.currentBatch).toBe(e.batch);
    const expected = {
      rollback: ["rolling_back", "rolled_back", "failed"],
      pause: ["paused"],
      stop: ["failed"],
    }[spec.onBreach];
    expect(expected).toContain(c.phase);
  }
  const b = c.batches[c.currentBatch]!;
  if ((c.phase === "running" || c.phase === "paused") && b.state === "running") {
    expect(
      (() => {
        const { failed, offerable } = refCount(current.map((n) => n.state));
        return refBreached(failed, offerable, spec.failureThresholdPercent, b.acceptedFailures);
      })(),
      "unhandled breach",
    ).toBe(false);
  }
  // ... unless an operator resumed a batch paused on its breach (its failures are then accepted).
  const resumed = decision.events.some(
    (e) => e.kind === "command_applied" && e.command.kind === "resume",
  );
  for (const old of before.campaign.batches) {
    const now = c.batches[old.index]!.state;
    if (old.state === "rolled_back" || (old.state === "breached" && !resumed))
      expect(now).not.toBe("passed");
  }

  // I2: once a batch is rolled back, every node of it that reached or may reach the target was
  // sent a rollback; none is left upgrading. While it rolls back, that includes a failed node
  // offered the upgrade whose latest Hello is on the target, whatever its code says.
  const saysTarget = (n: CampaignNode): boolean =>
    REF_FAILURE_STATES.has(n.state) &&
    n.upgradeOperationId !== undefined &&
    step.facts.get(n.nodeId)?.agentVersion === step.target.version;
  if (c.rollbackCause !== undefined) {
    for (const n of current) {
      expect(REF_UPGRADING_STATES.has(n.state), `${n.nodeId} still ${n.state} in a rollback`).toBe(
        false,
      );
      if (mayRunTarget(n) || (c.phase === "rolling_back" && saysTarget(n))) {
        expect(n.rollbackOperationId, `${n.nodeId} (${n.state}) not rolled back`).toBeDefined();
      }
    }
  }
  // I3: every succeeded node of a passed batch, already_current included, is confirmed.
  for (const batch of c.batches) {
    if (batch.state !== "passed") continue;
    for (const n of after.nodes) {
      if (n.batch === batch.index && n.state === "succeeded") {
        expect(n.confirmOperationId, `${n.nodeId} (${n.code}) not confirmed`).toBeDefined();
      }
    }
  }

  // Failed ≤ offered, per batch.
  for (const batch of c.batches) {
    const nodes = after.nodes.filter((n) => n.batch === batch.index);
    const failed = nodes.filter((n) => REF_FAILURE_STATES.has(n.state)).length;
    expect(failed).toBeLessThanOrEqual(
      nodes.filter((n) => n.upgradeOperationId !== undefined).length,
    );
  }

  // Paused time never counts: a batch passes only after minDuration of RUNNING time.
  for (const e of decision.events) {
    if (e.kind !== "batch_passed") continue;
    const batch = c.batches[e.batch]!;
    if (batch.nodeCount > 0)
      expect(running.get(e.batch) ?? 0).toBeGreaterThanOrEqual(batch.minDurationMs);
  }

  // finishedAt iff every node is final (and the phase ended).
  const allFinal = after.nodes.every((n) => REF_FINAL_STATES.has(n.state));
  if (c.finishedAt !== undefined) expect(allFinal).toBe(true);
  if (allFinal && REF_ENDED_PHASES.has(c.phase)) expect(c.finishedAt).toBeDefined();

  // Idempotent: deciding again on the result changes nothing and sends nothing.
  const again = decide({
    campaign: c,
    nodes: after.nodes,
    facts: step.facts,
    now,
    target: step.target,
    pools: step.pools,
  });
  expect(again.actions).toEqual([]);
  expect(again.changes).toEqual({ campaign: undefined, nodes: [] });
  expect(applyDecision(c, after.nodes, again).nodes).toEqual(after.nodes);
}

/** A node that runs or may still come to run the target, or was told to roll back from it. */
function mayRunTarget(n: CampaignNode): boolean {
  return (
    n.state === "timed_out" ||
    n.state === "rolling_back" ||
    n.state === "rolled_back" ||
    n.state === "rollback_failed" ||
    (n.state === "failed" &&
      (n.code === "config_apply_failed" ||
        n.code === "reconnect_timeout" ||
        n.code === "lost_after_upgrade"))
  );
}

/**
 * I2 at the end: no node of a rolled-back batch that this campaign offered the target is left on
 * it without having been sent a rollback, and an agent that honours rollbacks and is reachable
 * ends off the target.
 */
function checkRolledBack(scenario: Scenario, result: ReturnType<typeof simulate>): void {
  const c = result.campaign;
  if (c.rollbackCause === undefined) return;
  result.nodes.forEach((n) => {
    if (n.batch !== c.currentBatch) return;
    const f = result.facts.get(n.nodeId)!;
    const sim = scenario.nodes[Number(n.nodeId.slice(1))]!;
    // Nodes already on the target before (already_current) were never moved by this campaign.
    if (n.upgradeOperationId === undefined || f.agentVersion !== c.spec.targetVersion) return;
    expect(
      n.rollbackOperationId,
      `${n.nodeId} (${n.state}) on the target, never sent a rollback`,
    ).toBeDefined();
    if (f.online && sim.rollback === "reinstate") {
      expect.fail(`${n.nodeId} (${n.state}) honours rollbacks but ended on the target`);
    }
  });
}

/** Runs a scenario, checking every invariant at each decision, and that it ends (or pauses). */
export function runChecked(scenario: Scenario): ReturnType<typeof simulate> {
  const running = new Map<number, number>();
  const offered = new Set<string>();
  let last: { now: number; phase: string; batch: number } | undefined;
  const result = simulate(scenario, (step) => {
    if (last !== undefined && last.phase === "running") {
      running.set(last.batch, (running.get(last.batch) ?? 0) + (step.now - last.now));
    }
    checkStep(step, running, offered);
    last = {
      now: step.now,
      phase: step.after.campaign.phase,
      batch: step.after.campaign.currentBatch,
    };
  });
  expect(result.stalled, "the engine stalled: nothing would wake it").toBe(false);
  if (result.campaign.phase !== "paused") expect(result.campaign.finishedAt).toBeDefined();
  checkRolledBack(scenario, result);
  return result;
}
