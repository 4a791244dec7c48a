/**
 * What stops a desired version's convergence, in the leader's fleet passes on the memory
 * stores: a halt after a burst of failures stops its running convergence campaign's offers at
 * once, and an operator's abort of a convergence campaign halts that desired version until it
 * is set again.
 */
import { describe, expect, it } from "vitest";
import { OperationPhase } from "../../../proto/gen/agentcontrol/v1/agent_control_pb.js";
import { desired, finished, INTERVAL, world } from "./fleet-world.js";

const ids = (n: number) => Array.from({ length: n }, (_, i) => `n${String(i).padStart(2, "0")}`);
const upgradesSent = (sent: readonly { id: string }[]) =>
  new Set(sent.filter((s) => s.id.endsWith("/upgrade")).map((s) => s.id)).size;

/**
 * `count` connected nodes converging to desired version 2.0.0 (a minute to reconnect, no
 * config grace) with `disruptionBudgetPercent` and `maxFailures`, run 2 s: its first campaign
 * (`campaignId`) has made its first offers.
 */
async function converging(count: number, disruptionBudgetPercent: number, maxFailures: number) {
  const nodes = ids(count);
  const w = world(nodes);
  const d = desired({
    settings: {
      reconnectTimeoutMs: 60_000,
      configGraceMs: 0,
      disruptionBudgetPercent,
      maxFailures,
    },
  });
  w.fleetStore.tables.desired.set(d.id, d);
  for (const id of nodes) w.gateway.connect(id);
  await w.runFor(2000);
  return { w, d, campaignId: `${d.id}-1` };
}

describe("stopping convergence", () => {
  it("a yank of its target halts the desired version, saying why, and its running campaign offers nothing more", async () => {
    const { w, d, campaignId } = await converging(10, 20, 3);
    expect(upgradesSent(w.gateway.sent)).toBe(2);
    w.store.yankRelease({ version: "2.0.0", at: w.clock.ms, by: "alice", reason: "bad build" });
    await w.runFor(INTERVAL + 1000);
    expect(w.fleetStore.tables.desired.get(d.id)?.haltedReason).toBe(
      "release 2.0.0 was yanked: bad build",
    );
    const c = w.store.tables.campaigns.get(campaignId)?.campaign;
    expect(c?.code).toBe("release_yanked");
    await w.runFor(5 * INTERVAL);
    expect(upgradesSent(w.gateway.sent)).toBe(2);
    expect(w.store.tables.campaigns.size).toBe(1);
    w.unlisten();
  });

  it("a burst of failures stops the running convergence campaign on its failure budget and halts its desired version: nothing more is offered", async () => {
    const { w, d, campaignId } = await converging(10, 20, 2);
    const offered = () =>
      (w.store.tables.nodes.get(campaignId) ?? []).filter((n) => n.state === "offered");
    expect(offered()).toHaveLength(2);
    for (const n of offered())
      w.gateway.report(n.nodeId, `${campaignId}/${n.nodeId}/upgrade`, OperationPhase.REFUSED);
    // Refusals free their slots at once; the halt comes with the next fleet pass.
    await w.runFor(INTERVAL + 1000);
    expect(w.fleetStore.tables.desired.get(d.id)?.haltedAt).toBeDefined();
    const atHalt = upgradesSent(w.gateway.sent);
    await w.runFor(5 * INTERVAL);
    expect(upgradesSent(w.gateway.sent)).toBe(atHalt);
    const c = w.store.tables.campaigns.get(campaignId)?.campaign;
    // What is left of the desired version's limit of 2 is its budget: one failure tolerated.
    expect([c?.phase, c?.code, c?.message]).toEqual([
      "failed",
      "max_failures_exceeded",
      "2 of 10 nodes of the campaign failed (max failures 1: 1 allowed)",
    ]);
    expect(w.fleetStore.tables.desired.get(d.id)?.haltedReason).toContain(
      "convergence to 2.0.0 halted: 2 node(s) failed",
    );
    expect(atHalt).toBe(2);
    const states = (w.store.tables.nodes.get(campaignId) ?? []).map((n) => n.state);
    expect(states.filter((s) => s === "waiting")).toEqual([]);
    expect(states.filter((s) => s === "canceled")).toHaveLength(10 - atHalt);
    w.unlisten();
  });

  it("the halt follows the failure that completes the burst at once, not a fleet interval later", async () => {
    const { w, d, campaignId } = await converging(10, 20, 2);
    const offered = (w.store.tables.nodes.get(campaignId) ?? []).filter(
      (n) => n.state === "offered",
    );
    const failedAt = w.clock.ms;
    for (const n of offered)
      w.gateway.report(n.nodeId, `${campaignId}/${n.nodeId}/upgrade`, OperationPhase.REFUSED);
    await w.runFor(3000);
    const haltedAt = w.fleetStore.tables.desired.get(d.id)?.haltedAt;
    expect(haltedAt).toBeDefined();
    expect((haltedAt ?? Number.POSITIVE_INFINITY) - failedAt).toBeLessThanOrEqual(1000);
    expect(w.store.tables.campaigns.get(campaignId)?.campaign.code).toBe("max_failures_exceeded");
    // The two refused; their slots are not offered again in the decision that judged them.
    expect(upgradesSent(w.gateway.sent)).toBe(2);
    w.unlisten();
  });

  it("the failure that completes the burst offers nothing more, not even in the decision that judges it", async () => {
    const nodes = ids(10);
    const w = world(nodes);
    // One node in flight at a time (10 % of ten), three failures halt.
    const d = desired({
      settings: {
        reconnectTimeoutMs: 60_000,
        configGraceMs: 0,
        disruptionBudgetPercent: 10,
        maxFailures: 3,
      },
    });
    w.fleetStore.tables.desired.set(d.id, d);
    for (const id of nodes) w.gateway.connect(id);
    await w.runFor(2000);
    const campaignId = `${d.id}-1`;
    const offered = () =>
      (w.store.tables.nodes.get(campaignId) ?? []).filter((n) => n.state === "offered");
    for (let round = 0; round < 5; round++) {
      for (const n of offered())
        w.gateway.report(n.nodeId, `${campaignId}/${n.nodeId}/upgrade`, OperationPhase.REFUSED);
      await w.runFor(2000);
    }
    // Each refusal frees the one slot; the third completes the burst: no fourth offer.
    expect(upgradesSent(w.gateway.sent)).toBe(3);
    expect(w.fleetStore.tables.desired.get(d.id)?.haltedAt).toBeDefined();
    await w.runFor(5 * INTERVAL);
    expect(upgradesSent(w.gateway.sent)).toBe(3);
    w.unlisten();
  });

  it("a convergence campaign after earlier failures stops at the failure that completes the burst over both", async () => {
    const nodes = ids(10);
    const w = world(nodes);
    const d = desired({
      settings: {
        reconnectTimeoutMs: 60_000,
        configGraceMs: 0,
        disruptionBudgetPercent: 10,
        maxFailures: 3,
      },
    });
    w.fleetStore.tables.desired.set(d.id, d);
    // An earlier convergence campaign of it failed two nodes (since it was set).
    await finished(w.store, `${d.id}-1`, `convergence:${d.id}`, {
      x00: "failed",
      x01: "timed_out",
    });
    for (const id of nodes) w.gateway.connect(id);
    await w.runFor(2000);
    const campaignId = `${d.id}-2`;
    const offered = () =>
      (w.store.tables.nodes.get(campaignId) ?? []).filter((n) => n.state === "offered");
    expect(offered()).toHaveLength(1);
    for (let round = 0; round < 3; round++) {
      for (const n of offered())
        w.gateway.report(n.nodeId, `${campaignId}/${n.nodeId}/upgrade`, OperationPhase.REFUSED);
      await w.runFor(2000);
    }
    expect(upgradesSent(w.gateway.sent)).toBe(1);
    expect(w.fleetStore.tables.desired.get(d.id)?.haltedAt).toBeDefined();
    w.unlisten();
  });

  it("an operator's abort of a convergence campaign halts its desired version: no new campaign over the nodes it stopped", async () => {
    const { w, d, campaignId } = await converging(4, 25, 10);
    w.store.tables.addCommand({
      campaignId,
      kind: "abort",
      rollback: false,
      reason: "not now",
      actor: "alice",
      actor_ip: "10.0.0.1",
    });
    await w.runFor(10 * INTERVAL);
    expect(w.store.tables.campaigns.get(campaignId)?.campaign.phase).toBe("aborted");
    expect([...w.store.tables.campaigns.keys()]).toEqual([campaignId]);
    const after = w.fleetStore.tables.desired.get(d.id);
    expect(after?.haltedReason).toBe(
      `convergence to 2.0.0 halted: its campaign ${campaignId} was aborted by an operator; set the desired version again to resume`,
    );
    expect(w.halted).toEqual([d.id]);
    w.unlisten();
  });
});
