/**
 * The engine's safety invariants (SPEC §8: I1 no breached batch passes, I2 a rolled-back batch's
 * nodes that reached or may reach the target are sent a rollback, I3 every succeeded node of a
 * passed batch is confirmed, I6 final states never change), each on the scenario that broke it.
 */
import { describe, expect, it } from "vitest";
import { createDraft, emit, updateCampaign } from "../../../control/campaign/draft.js";
import { annotateFinal } from "../../../control/campaign/draft-annotate.js";
import type { CampaignSpecInput } from "../../../control/campaign/index.js";
import { judgePass } from "../../../control/campaign/judge-batch.js";
import type { Harness } from "./harness.js";
import {
  advance,
  batchIds,
  bringBack,
  configFails,
  fleet,
  goOffline,
  inState,
  MIN,
  NEW,
  nodeOf,
  OLD,
  reboot,
  report,
  sendFails,
  sent,
  start,
  tick,
} from "./harness.js";

const oneBatch: Partial<CampaignSpecInput> = {
  batches: [{ percent: 100, minDurationMs: 0 }],
  failureThresholdPercent: 5,
  disruptionBudgetPercent: 100,
};

/** The node's stream is gone long enough for it to be skipped when a slot is free. */
function offline(h: Harness, nodeId: string): void {
  goOffline(h, nodeId);
}

describe("I1: no breached batch passes", () => {
  it("breaches a batch whose offline nodes are skipped at its end (5 of 90 offerable > 5 %)", () => {
    const h = start(fleet(100), oneBatch);
    const ids = batchIds(h, 0);
    const away = ids.slice(90);
    for (const id of away) offline(h, id);
    tick(h);
    expect(inState(h, "offered")).toEqual(ids.slice(0, 90));
    for (const id of ids.slice(0, 5)) report(h, id, "REFUSED");
    bringBack(h, ids.slice(5, 90));
    advance(h, 1000);
    expect(inState(h, "skipped")).toEqual(away);
    expect(h.campaign.batches[0]?.state).toBe("breached");
    expect(h.campaign).toMatchObject({
      phase: "rolling_back",
      code: "batch_failed",
      message: "5 of 90 nodes of batch 1 failed (threshold 5 %)",
    });
  });

  it("refuses to pass a batch whose failures exceed its threshold, whatever rule ran before", () => {
    const h = start(fleet(10), oneBatch);
    tick(h);
    const nodes = h.nodes.map((n, i) =>
      i === 0
        ? { ...n, state: "failed" as const, code: "rejected" as const, finishedAt: h.now }
        : { ...n, state: "succeeded" as const, finishedAt: h.now },
    );
    const d = createDraft(h.campaign, nodes, h.facts, h.now + 1, h.target);
    expect(() => judgePass(d)).toThrow(/refusing to pass batch 1: 1 of 10 nodes failed/);
  });
});

/**
 * 20 nodes in one batch lasting 30 minutes, threshold 20 % (4 failures allowed). Five nodes end
 * differently, then the fifth failure (at the 10-minute reconnect timeout) breaches the batch:
 * config: failed config_apply_failed (runs the new release); restart: failed reconnect_timeout
 * (announced a restart, may still come back on it); gone: timed_out (may still come back on it);
 * refuse: failed rejected and revert: failed reverted (both still on the old release).
 */
function breachedWithFinalNodes(): { h: Harness; ids: Record<string, string>; rest: string[] } {
  const h = start(fleet(20), {
    batches: [{ percent: 100, minDurationMs: 30 * MIN }],
    failureThresholdPercent: 20,
    disruptionBudgetPercent: 100,
  });
  const all = batchIds(h, 0);
  const [config, restart, gone, refuse, revert] = all as [string, string, string, string, string];
  const rest = all.slice(5);
  tick(h);
  bringBack(h, [config, ...rest]);
  report(h, refuse, "REFUSED");
  report(h, revert, "ACCEPTED");
  reboot(h, revert, OLD);
  report(h, restart, "RESTARTING");
  goOffline(h, restart);
  report(h, gone, "DOWNLOADING");
  goOffline(h, gone);
  tick(h);
  advance(h, MIN);
  configFails(h, config);
  advance(h, MIN);
  expect(h.campaign.phase).toBe("running");
  advance(h, 8 * MIN);
  return { h, ids: { config, restart, gone, refuse, revert }, rest };
}

describe("I2: a rollback reaches every node of the batch that reached or may reach the target", () => {
  it("sends a rollback to its failed config_apply_failed, failed reconnect_timeout and timed_out nodes, keeping their states", () => {
    const { h, ids, rest } = breachedWithFinalNodes();
    expect(h.campaign).toMatchObject({ phase: "rolling_back", code: "batch_failed" });
    expect(sent(h, "rollback").sort()).toEqual([ids.config, ids.restart, ids.gone, ...rest].sort());
    const expected = {
      config: { state: "failed", code: "config_apply_failed" },
      restart: { state: "failed", code: "reconnect_timeout" },
      gone: { state: "timed_out", code: "reconnect_timeout" },
    };
    for (const [name, outcome] of Object.entries(expected)) {
      const id = ids[name]!;
      expect(nodeOf(h, id)).toMatchObject({
        ...outcome,
        rollbackOperationId: `c1/${id}/rollback`,
        rollbackAt: 10 * MIN,
        rollbackDeadline: 20 * MIN,
      });
      expect(h.actions).toContainEqual(
        expect.objectContaining({ kind: "rollback", nodeId: id, version: OLD }),
      );
      expect(h.last?.changes.nodes.map((n) => n.nodeId)).toContain(id);
    }
    for (const id of [ids.refuse!, ids.revert!]) {
      expect(nodeOf(h, id).rollbackOperationId).toBeUndefined();
    }
  });

  it("keeps rolling back, the campaign live, until its final nodes that may run the target are confirmed back", () => {
    const { h, ids, rest } = breachedWithFinalNodes();
    for (const id of rest) report(h, id, "REINSTATED", "rollback");
    advance(h, 1000);
    expect(h.campaign).toMatchObject({ phase: "rolling_back", finishedAt: undefined });
    report(h, ids.config!, "REINSTATED", "rollback");
    reboot(h, ids.restart!, OLD);
    advance(h, 1000);
    expect(h.campaign).toMatchObject({ phase: "rolling_back", finishedAt: undefined });
    reboot(h, ids.gone!, OLD);
    const d = advance(h, 1000);
    expect(h.campaign).toMatchObject({ phase: "rolled_back", code: "batch_failed" });
    expect(h.campaign.finishedAt).toBe(h.now);
    // Nothing is sent with the end; the nodes that said they failed and were sent no rollback
    // are left a late one (late-rollback.ts), delivered only if they say Hello on the target.
    expect(d.actions.every((a) => a.kind === "rollback" && a.late === true)).toBe(true);
    expect(d.actions.map((a) => a.nodeId).sort()).toEqual([ids.refuse, ids.revert].sort());
    for (const [name, state] of [
      ["config", "failed"],
      ["restart", "failed"],
      ["gone", "timed_out"],
    ] as const) {
      expect(nodeOf(h, ids[name]!).state).toBe(state);
    }
    expect(tick(h).changes).toEqual({ campaign: undefined, nodes: [] });
  });

  it("ends failed (rollback_unconfirmed) naming a final node not confirmed back within the rollback timeout", () => {
    const { h, ids, rest } = breachedWithFinalNodes();
    for (const id of [...rest, ids.config!, ids.restart!]) report(h, id, "REINSTATED", "rollback");
    const waiting = advance(h, 1000);
    expect(h.campaign.phase).toBe("rolling_back");
    expect(waiting.wakeAt).toBe(20 * MIN);
    h.now = 20 * MIN - 1;
    tick(h);
    expect(h.campaign.phase).toBe("rolling_back");
    h.now = 20 * MIN;
    tick(h);
    expect(h.campaign).toMatchObject({ phase: "failed", code: "rollback_unconfirmed" });
    expect(h.campaign.message).toContain(ids.gone);
    expect(h.campaign.message).not.toContain(ids.config);
    expect(nodeOf(h, ids.gone!)).toMatchObject({ state: "timed_out", code: "reconnect_timeout" });
    expect(h.campaign.finishedAt).toBe(h.now);
  });

  it("ends failed (rollback_failed) when a final node refuses its rollback", () => {
    const { h, ids, rest } = breachedWithFinalNodes();
    for (const id of [...rest, ids.restart!, ids.gone!]) report(h, id, "REINSTATED", "rollback");
    report(h, ids.config!, "FAILED", "rollback");
    advance(h, 1000);
    expect(h.campaign).toMatchObject({ phase: "failed", code: "rollback_failed" });
    expect(h.campaign.message).toContain(ids.config);
    expect(nodeOf(h, ids.config!)).toMatchObject({ state: "failed", code: "config_apply_failed" });
  });

  it("ends failed (rollback_failed) when a final node's rollback cannot be delivered", () => {
    const { h, ids, rest } = breachedWithFinalNodes();
    for (const id of [...rest, ids.config!, ids.restart!]) report(h, id, "REINSTATED", "rollback");
    sendFails(h, ids.gone!, "rollback");
    advance(h, 1000);
    expect(h.campaign).toMatchObject({ phase: "failed", code: "rollback_failed" });
    expect(h.campaign.message).toBe(
      `1 node(s) of batch 1 could not be confirmed back on their previous release: ${ids.gone}`,
    );
  });

  it("takes a final node for rolled back only once it runs its previous version, not on a restart on the target", () => {
    const { h, ids, rest } = breachedWithFinalNodes();
    for (const id of [...rest, ids.restart!, ids.gone!]) report(h, id, "REINSTATED", "rollback");
    reboot(h, ids.config!, NEW);
    advance(h, 1000);
    expect(h.campaign.phase).toBe("rolling_back");
    reboot(h, ids.config!, OLD);
    advance(h, 1000);
    expect(h.campaign).toMatchObject({ phase: "rolled_back", code: "batch_failed" });
  });

  it("records a rollback sent to a final node without changing anything else, and refuses any other change", () => {
    const { h, ids } = breachedWithFinalNodes();
    const d = createDraft(h.campaign, h.nodes, h.facts, h.now, h.target);
    const final = nodeOf(h, ids.refuse!);
    const before = d.revision;
    const after = annotateFinal(d, final, { rollbackOperationId: "x", rollbackAt: 1 });
    expect(after).toEqual({ ...final, rollbackOperationId: "x", rollbackAt: 1 });
    expect(d.revision).toBeGreaterThan(before);
    expect(() => annotateFinal(d, after, { state: "succeeded" } as never)).toThrow(/state/);
    expect(() => annotateFinal(d, after, { rollbackOperationId: "y" })).toThrow(/already/);
    const live = start(fleet(1), oneBatch);
    tick(live);
    const dl = createDraft(live.campaign, live.nodes, live.facts, live.now, live.target);
    expect(() => annotateFinal(dl, live.nodes[0]!, { confirmOperationId: "z" })).toThrow(/final/);
  });
});

describe("I3: every succeeded node of a passed batch is confirmed", () => {
  it("confirms the nodes already on the target when their batch passes (already_current)", () => {
    const h = start(fleet(10, { version: (i) => (i % 3 === 0 ? NEW : OLD) }), oneBatch);
    tick(h);
    const current = inState(h, "succeeded");
    expect(current).toHaveLength(4);
    expect(sent(h, "confirm")).toEqual([]);
    bringBack(h, inState(h, "offered"));
    const d = advance(h, 1000);
    expect(h.campaign.phase).toBe("completed");
    expect(sent(h, "confirm").sort()).toEqual(batchIds(h, 0).sort());
    for (const id of current) {
      expect(nodeOf(h, id)).toMatchObject({
        state: "succeeded",
        code: "already_current",
        confirmOperationId: `c1/${id}/confirm`,
        finishedAt: 0,
      });
      expect(d.actions).toContainEqual({
        kind: "confirm",
        nodeId: id,
        operationId: `c1/${id}/confirm`,
        version: NEW,
        sequence: 2,
      });
    }
    expect(tick(h).actions).toEqual([]);
  });

  it("does not confirm the already-current nodes of a batch that was rolled back", () => {
    const h = start(fleet(10, { version: (i) => (i === 0 ? NEW : OLD) }), {
      ...oneBatch,
      failureThresholdPercent: 0,
    });
    tick(h);
    report(h, inState(h, "offered")[0]!, "REFUSED");
    tick(h);
    expect(h.campaign.phase).toBe("rolling_back");
    expect(sent(h, "confirm")).toEqual([]);
  });
});

describe("engine self-checks", () => {
  it("refuses to queue two operations with the same id in one decision", () => {
    const h = start(fleet(1), oneBatch);
    const d = createDraft(h.campaign, h.nodes, h.facts, h.now, h.target);
    const action = {
      kind: "upgrade",
      nodeId: "node-000",
      operationId: "c1/node-000/upgrade",
      version: NEW,
      sequence: 2,
    } as const;
    emit(d, action);
    expect(() => emit(d, action)).toThrow(/emitted twice/);
  });

  it("refuses to change the phase of an ended campaign", () => {
    const h = start(fleet(1), oneBatch);
    tick(h, [{ kind: "abort", rollback: false }]);
    expect(h.campaign.phase).toBe("aborted");
    const d = createDraft(h.campaign, h.nodes, h.facts, h.now, h.target);
    expect(() => updateCampaign(d, { phase: "running" })).toThrow(/ended aborted/);
  });
});
