/**
 * Stopping a batch, beyond its phases: what a rollback records on each node and sends, what it
 * cancels and with which code, where an open pause's time goes, the events and log lines it
 * writes, and how its end names the nodes that could not be confirmed back.
 */
import { describe, expect, it } from "vitest";
import { awaitsRollback, type CampaignSpecInput } from "../../../control/campaign/index.js";
import type { Harness } from "./harness.js";
import {
  advance,
  batchIds,
  bringBack,
  configFails,
  fleet,
  MIN,
  nodeOf,
  OLD,
  reboot,
  report,
  start,
  tick,
} from "./harness.js";

/** 20 nodes, all offered at t=0 in one batch of 30 minutes; 2 failures breach it (> 5 %). */
const oneBatch: Partial<CampaignSpecInput> = {
  batches: [{ percent: 100, minDurationMs: 30 * MIN }],
  failureThresholdPercent: 5,
  disruptionBudgetPercent: 100,
};

const WHY = "2 of 20 nodes of batch 1 failed (threshold 5 %)";

/**
 * The batch of {@link oneBatch} breached at 1 minute by its first two nodes refusing (or
 * reporting `phase`, e.g. REINSTATED: reverted by the agent on the same boot).
 */
function breached(phase: "REFUSED" | "REINSTATED" = "REFUSED"): {
  h: Harness;
  failed: string[];
  rolling: string[];
} {
  const h = start(fleet(20), oneBatch);
  tick(h);
  const ids = batchIds(h, 0);
  h.now = MIN;
  for (const id of ids.slice(0, 2)) report(h, id, phase);
  tick(h);
  expect(h.campaign).toMatchObject({ phase: "rolling_back", message: WHY });
  return { h, failed: ids.slice(0, 2), rolling: ids.slice(2) };
}

describe("starting a rollback", () => {
  it("records on each node told to roll back when, on which boot and until when, and sends its previous version", () => {
    const { h, rolling } = breached();
    const id = rolling[0]!;
    expect(nodeOf(h, id)).toMatchObject({
      state: "rolling_back",
      rollbackOperationId: `c1/${id}/rollback`,
      rollbackAt: MIN,
      rollbackBootId: h.facts.get(id)?.bootId,
      rollbackDeadline: 11 * MIN,
    });
    expect(h.last?.actions).toContainEqual({
      kind: "rollback",
      nodeId: id,
      operationId: `c1/${id}/rollback`,
      version: OLD,
      reason: WHY,
    });
    expect(h.last?.reasons).toContain(`node ${id}: offered → rolling_back: rolling back`);
    expect(h.last?.reasons).toContain(`campaign: rolling back batch 1: ${WHY}`);
    expect(h.last?.events).toContainEqual({ kind: "rollback_started", batch: 0, cause: "breach" });
    expect(h.campaign.rollbackCause).toBe("breach");
    expect(h.campaign.batches[0]?.pausedMs).toBe(0);
  });

  it("a node of which nothing is known when its rollback starts is still told, its boot unknown", () => {
    const h = start(fleet(20), oneBatch);
    tick(h);
    const [gone, a, b] = batchIds(h, 0) as [string, string, string];
    h.facts.delete(gone);
    h.now = MIN;
    report(h, a, "REFUSED");
    report(h, b, "REFUSED");
    tick(h);
    expect(nodeOf(h, gone)).toMatchObject({ state: "rolling_back", rollbackBootId: undefined });
    expect(h.last?.actions).toContainEqual(
      expect.objectContaining({ kind: "rollback", nodeId: gone }),
    );
  });

  it("a final node of which nothing is known any more is still sent the rollback, its boot unknown", () => {
    const h = start(fleet(20), { ...oneBatch, failureThresholdPercent: 10 });
    tick(h);
    const [gone, refuse, refuse2] = batchIds(h, 0) as [string, string, string];
    report(h, gone, "DOWNLOADING");
    h.facts.delete(gone);
    bringBack(h, batchIds(h, 0).slice(3));
    h.now = 10 * MIN;
    report(h, refuse, "REFUSED");
    report(h, refuse2, "REFUSED");
    tick(h);
    expect(h.campaign.phase).toBe("rolling_back");
    expect(nodeOf(h, gone)).toMatchObject({
      state: "timed_out",
      rollbackOperationId: `c1/${gone}/rollback`,
      rollbackBootId: undefined,
    });
  });

  it("a final node that may run the target is sent the rollback, recorded on it and in the log", () => {
    const h = start(fleet(20, { capabilities: () => ["upgrade.v1", "config.v1"] }), oneBatch);
    tick(h);
    const [config, refuse, refuse2] = batchIds(h, 0) as [string, string, string];
    bringBack(h, [config]);
    tick(h);
    configFails(h, config);
    h.now = MIN;
    tick(h);
    expect(nodeOf(h, config)).toMatchObject({ state: "failed", code: "config_apply_failed" });
    report(h, refuse, "REFUSED");
    report(h, refuse2, "REFUSED");
    h.now = 2 * MIN;
    tick(h);
    expect(h.campaign.phase).toBe("rolling_back");
    expect(nodeOf(h, config)).toMatchObject({
      state: "failed",
      rollbackOperationId: `c1/${config}/rollback`,
      rollbackAt: 2 * MIN,
      rollbackBootId: h.facts.get(config)?.bootId,
      rollbackDeadline: 12 * MIN,
    });
    expect(h.last?.actions).toContainEqual(
      expect.objectContaining({ kind: "rollback", nodeId: config, version: OLD }),
    );
    expect(h.last?.reasons).toContain(
      `node ${config}: failed (final): rollback sent (config_apply_failed; state kept)`,
    );
  });

  it("cancels the waiting nodes (batch_failed, saying why) and the batches not started", () => {
    const h = start(fleet(40), {
      ...oneBatch,
      batches: [
        { percent: 50, minDurationMs: 30 * MIN },
        { percent: 100, minDurationMs: 30 * MIN },
      ],
      concurrency: 4,
      failureThresholdPercent: 5,
    });
    tick(h);
    const [a, b] = batchIds(h, 0) as [string, string];
    report(h, a, "REFUSED");
    report(h, b, "REFUSED");
    tick(h);
    expect(h.campaign.phase).toBe("rolling_back");
    const waiting = batchIds(h, 0).slice(6);
    for (const id of waiting) {
      expect(nodeOf(h, id)).toMatchObject({
        state: "canceled",
        code: "batch_failed",
        message: `canceled: ${h.campaign.message}`,
      });
      expect(h.last?.reasons).toContain(`node ${id}: waiting → canceled: canceled`);
    }
    expect(h.campaign.batches[1]?.state).toBe("canceled");
    for (const id of batchIds(h, 1)) expect(nodeOf(h, id).state).toBe("canceled");
  });

  it("an operator's abort cancels them with code aborted and starts a rollback of cause abort", () => {
    const h = start(fleet(20), { ...oneBatch, concurrency: 2 });
    tick(h);
    const d = tick(h, [{ kind: "abort", rollback: true, reason: "wrong build" }]);
    expect(d.events).toContainEqual({ kind: "rollback_started", batch: 0, cause: "abort" });
    const waiting = batchIds(h, 0).slice(2);
    for (const id of waiting) {
      expect(nodeOf(h, id)).toMatchObject({
        state: "canceled",
        code: "aborted",
        message: "canceled: wrong build",
      });
    }
  });

  it("gives an open pause's time to the batch and closes the pause", () => {
    const h = start(fleet(20), oneBatch);
    tick(h);
    h.now = MIN;
    tick(h, [{ kind: "pause" }]);
    expect(h.campaign.pausedAt).toBe(MIN);
    const [a, b] = batchIds(h, 0) as [string, string];
    h.now = 4 * MIN;
    report(h, a, "REFUSED");
    report(h, b, "REFUSED");
    tick(h);
    expect(h.campaign.phase).toBe("rolling_back");
    expect(h.campaign.pausedAt).toBeUndefined();
    expect(h.campaign.batches[0]?.pausedMs).toBe(3 * MIN);
  });
});

describe("ending a rollback", () => {
  it("rolled back: the batch ends at that time, the log says so", () => {
    const { h, rolling } = breached();
    for (const id of rolling) report(h, id, "REINSTATED", "rollback");
    advance(h, MIN);
    expect(h.campaign.batches[0]).toMatchObject({ state: "rolled_back", endedAt: 2 * MIN });
    expect(h.last?.reasons).toContain("campaign: batch 1 rolled back");
  });

  it("a node the agent reverted on the same boot, sent no rollback, does not hold the end", () => {
    const { h, failed, rolling } = breached("REINSTATED");
    expect(nodeOf(h, failed[0]!)).toMatchObject({ state: "failed", code: "reverted" });
    for (const id of rolling) report(h, id, "REINSTATED", "rollback");
    advance(h, MIN);
    expect(h.campaign).toMatchObject({ phase: "rolled_back", code: "batch_failed" });
  });

  it("a node judged rolled back is not judged again when the rollback ends", () => {
    const { h, rolling } = breached();
    const [first, ...others] = rolling as [string, ...string[]];
    reboot(h, first, OLD);
    advance(h, MIN);
    expect(nodeOf(h, first).state).toBe("rolled_back");
    h.facts.delete(first);
    for (const id of others) report(h, id, "REINSTATED", "rollback");
    advance(h, MIN);
    expect(h.campaign).toMatchObject({ phase: "rolled_back", code: "batch_failed" });
  });

  it("an operator's abort: the log says aborted and which batch rolled back", () => {
    const h = start(fleet(20), oneBatch);
    tick(h);
    tick(h, [{ kind: "abort", rollback: true, reason: "wrong build" }]);
    for (const id of batchIds(h, 0)) report(h, id, "REINSTATED", "rollback");
    tick(h);
    expect(h.campaign.phase).toBe("aborted");
    expect(h.last?.reasons).toContain("campaign: aborted; batch 1 rolled back");
  });

  it("names at most five nodes that could not be confirmed back, then how many more", () => {
    const { h, rolling } = breached();
    const bad = rolling.slice(0, 7);
    for (const id of bad) report(h, id, "FAILED", "rollback");
    for (const id of rolling.slice(7)) report(h, id, "REINSTATED", "rollback");
    advance(h, MIN);
    expect(h.campaign).toMatchObject({
      phase: "failed",
      code: "rollback_failed",
      message: `7 node(s) of batch 1 could not be confirmed back on their previous release: ${bad.slice(0, 5).join(", ")} and 2 more`,
    });
    expect(h.campaign.batches[0]).toMatchObject({ state: "breached", endedAt: 2 * MIN });
    expect(h.last?.reasons).toContain("campaign: rollback of batch 1 ended with 7 failure(s)");
  });

  it("names all five when there are exactly five", () => {
    const { h, rolling } = breached();
    const bad = rolling.slice(0, 5);
    for (const id of bad) report(h, id, "FAILED", "rollback");
    for (const id of rolling.slice(5)) report(h, id, "REINSTATED", "rollback");
    advance(h, MIN);
    expect(h.campaign.message).toBe(
      `5 node(s) of batch 1 could not be confirmed back on their previous release: ${bad.join(", ")}`,
    );
  });

  it("rollback_failed when any rollback failed, even if others were only unconfirmed", () => {
    const { h, rolling } = breached();
    const [unconfirmed, failed] = rolling as [string, string];
    report(h, failed, "FAILED", "rollback");
    for (const id of rolling.slice(2)) report(h, id, "REINSTATED", "rollback");
    advance(h, 10 * MIN);
    expect(nodeOf(h, unconfirmed)).toMatchObject({
      state: "rollback_failed",
      code: "rollback_unconfirmed",
    });
    expect(h.campaign).toMatchObject({ phase: "failed", code: "rollback_failed" });
    expect(h.campaign.message).toContain(`${unconfirmed}, ${failed}`);
  });

  it("waits while any node is still rolling back", () => {
    const { h, rolling } = breached();
    for (const id of rolling.slice(1)) report(h, id, "REINSTATED", "rollback");
    const d = advance(h, MIN);
    expect(h.campaign.phase).toBe("rolling_back");
    expect(h.campaign.batches[0]?.endedAt).toBeUndefined();
    expect(d.wakeAt).toBe(11 * MIN);
    expect(nodeOf(h, rolling[0]!).state).toBe("rolling_back");
  });
});

describe("which final nodes a rollback's end waits for (the worker reads their facts)", () => {
  it("a final node once it was sent the rollback with its state kept, not before, and never one that rolled back", () => {
    const h = start(fleet(1), oneBatch);
    const n = h.nodes[0]!;
    const sentIt = { rollbackOperationId: "c1/x/rollback" };
    const timedOut = { ...n, state: "timed_out" as const, code: "reconnect_timeout" as const };
    expect(awaitsRollback(timedOut)).toBe(false);
    expect(awaitsRollback({ ...timedOut, ...sentIt })).toBe(true);
    // Sent only because its latest Hello was on the target: its code no longer says it.
    const rejected = { ...n, state: "failed" as const, code: "rejected" as const };
    expect(awaitsRollback({ ...rejected, ...sentIt })).toBe(true);
    for (const state of ["rolled_back", "rollback_failed", "rolling_back"] as const) {
      expect(awaitsRollback({ ...n, state, ...sentIt })).toBe(false);
    }
  });
});
