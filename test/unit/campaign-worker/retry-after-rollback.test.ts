/**
 * `campaign retry` after `abort --rollback`, on the memory store with the real worker and the
 * administrator's retry (`control/admin/campaign-start.ts`): the new campaign takes the nodes
 * the rollback took back with the canceled ones, under the settings the retry changed, and the
 * worker offers them the target again; a setting a start would refuse is refused the same way.
 */
import { describe, expect, it } from "vitest";
import { retryCampaign, type StartDeps } from "../../../control/admin/campaign-start.js";
import { DEFAULT_POLICY } from "../../../control/campaign/index.js";
import { MemoryFleetStore } from "../../../control/campaign-store/index.js";
import { admissionRelease } from "../../../control/campaign-worker/system-start.js";
import { ControlError } from "../../../control/errors.js";
import { OperationPhase } from "../../../proto/gen/agentcontrol/v1/agent_control_pb.js";
import { NEW, OLD, world } from "./worker-world.js";

const MIN = 60_000;
const ids = ["n1", "n2", "n3", "n4"];

/** c1 over four nodes, its canaries upgraded and verifying, aborted with rollback and ended. */
async function abortedWithRollback() {
  const w = world(ids);
  for (const id of ids) w.gateway.connect(id);
  await w.start("c1", ids, {
    batches: [
      { percent: 50, minDurationMs: 30 * MIN },
      { percent: 100, minDurationMs: 30 * MIN },
    ],
    disruptionBudgetPercent: 100,
    configGraceMs: 0,
  });
  const worker = w.worker();
  worker.listen();
  await worker.step();
  const canaries = w
    .nodesOf("c1")
    .filter((n) => n.state === "offered")
    .map((n) => n.nodeId);
  expect(canaries).toHaveLength(2);
  for (const id of canaries) {
    w.gateway.report(id, `c1/${id}/upgrade`, OperationPhase.RESTARTING);
    w.gateway.disconnect(id);
    w.gateway.connect(id, "b1", NEW);
  }
  w.clock.advance(100);
  await worker.step();
  for (const n of w.nodesOf("c1").filter((x) => canaries.includes(x.nodeId)))
    expect(n.state).toBe("verifying");
  w.store.tables.addCommand({
    campaignId: "c1",
    kind: "abort",
    rollback: true,
    reason: "wrong day",
    actor: "operator",
    actor_ip: "",
  });
  // A command reaches the worker on its next pass over the campaign (every interval).
  w.clock.advance(5000);
  await worker.step();
  expect(w.store.tables.campaigns.get("c1")?.campaign.phase).toBe("rolling_back");
  for (const id of canaries) {
    w.gateway.report(id, `c1/${id}/rollback`, OperationPhase.REINSTATED);
    w.gateway.disconnect(id);
    w.gateway.connect(id, "b2", OLD);
  }
  w.clock.advance(100);
  await worker.step();
  const c1 = w.store.tables.campaigns.get("c1")?.campaign;
  expect(c1?.phase).toBe("aborted");
  expect(c1?.finishedAt).toBeDefined();
  for (const n of w.nodesOf("c1").filter((x) => canaries.includes(x.nodeId)))
    expect(n.state).toBe("rolled_back");
  const deps: StartDeps = {
    fleet: new MemoryFleetStore(w.store),
    release: async (version) => {
      const r = w.store.tables.releases.get(version);
      return r === undefined ? undefined : admissionRelease(r);
    },
    clock: w.clock,
    policy: { ...DEFAULT_POLICY, minBatchDurationMs: 0, firstBatchMaxPercent: 50 },
    maxVersion: undefined,
  };
  return { w, worker, canaries, deps };
}

describe("a retry after abort --rollback, through the worker", () => {
  it("takes the rolled-back nodes under the changed settings, and the worker offers them the target again", async () => {
    const { w, worker, canaries, deps } = await abortedWithRollback();
    const retried = await retryCampaign(deps, {
      id: "c1",
      excludeNodeIds: [],
      reason: "second attempt",
      actor: { name: "alice", ip: "" },
      settings: {
        batches: [
          { percent: 50, minDurationMs: 5 * MIN },
          { percent: 100, minDurationMs: 5 * MIN },
        ],
        failureThresholdPercent: 50,
        onBreach: "pause",
      },
    });
    expect(retried.retryOf).toBe("c1");
    expect(retried.spec).toMatchObject({
      targetVersion: NEW,
      batches: [
        { percent: 50, minDurationMs: 5 * MIN },
        { percent: 100, minDurationMs: 5 * MIN },
      ],
      failureThresholdPercent: 50,
      onBreach: "pause",
      disruptionBudgetPercent: 100,
      reason: "second attempt",
    });
    const nodes = w.nodesOf(retried.id);
    expect(nodes.map((n) => n.nodeId).sort()).toEqual(ids);
    // As the API does after a retry: the worker decides the new campaign at once.
    worker.wake(retried.id);
    w.clock.advance(100);
    await worker.step();
    const offered = w
      .nodesOf(retried.id)
      .filter((n) => n.state === "offered")
      .map((n) => n.nodeId);
    expect(offered.sort()).toEqual([...canaries].sort());
    expect(
      w.gateway.sent.filter((s) => s.id.startsWith(`${retried.id}/`)).map((s) => s.kind),
    ).toEqual(["agentUpgrade", "agentUpgrade"]);
  });

  it("refuses a setting a start would refuse, with the start's own violations, and starts nothing", async () => {
    const { w, deps } = await abortedWithRollback();
    const refused = await retryCampaign(deps, {
      id: "c1",
      excludeNodeIds: [],
      reason: "",
      actor: { name: "alice", ip: "" },
      settings: { failureThresholdPercent: 101, batches: [{ percent: 50, minDurationMs: 0 }] },
    }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ControlError);
    expect((refused as ControlError).code).toBe("invalid_plan");
    expect((refused as ControlError).message).toContain("failure_threshold_percent");
    expect((refused as ControlError).message).toContain("the last batch must be 100 %");
    expect([...w.store.tables.campaigns.keys()]).toEqual(["c1"]);
  });
});
