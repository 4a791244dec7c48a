/**
 * The leader's fleet passes in the campaign worker, on the memory stores, a fake gateway and
 * the manual clock: a node that comes online behind its desired version gets a convergence
 * campaign at once (not an interval later), a burst of failures halts convergence with an audit
 * row and the metrics hook, and a completed campaign records its target as a desired version.
 */
import { describe, expect, it } from "vitest";
import { desired, finished, INTERVAL, T0, world } from "./fleet-world.js";

describe("the leader's fleet passes", () => {
  it("a node that comes online behind its desired version is converged at once, not an interval later", async () => {
    const w = world(["n1", "n2"]);
    const d = desired();
    w.fleetStore.tables.desired.set(d.id, d);
    await w.runFor(5000);
    expect(w.store.tables.campaigns.size).toBe(0);
    w.gateway.connect("n1");
    await w.runFor(2000);
    const started = [...w.store.tables.campaigns.values()];
    expect(started.map((c) => [c.campaign.id, c.createdBy, c.createdAt - T0])).toEqual([
      [`${d.id}-1`, `convergence:${d.id}`, 5000],
    ]);
    expect(w.store.tables.nodes.get(`${d.id}-1`)?.map((n) => n.nodeId)).toEqual(["n1"]);
    expect(w.store.tables.audits.find((a) => a.campaignId === `${d.id}-1`)?.actor).toBe("control");
    w.unlisten();
  });

  it("a burst of failures halts convergence, says so in the audit log, tells the metrics hook and starts nothing", async () => {
    const w = world(["n1", "n2", "n3"]);
    const d = desired();
    w.fleetStore.tables.desired.set(d.id, d);
    await finished(w.store, `${d.id}-1`, `convergence:${d.id}`, { n2: "failed", n3: "timed_out" });
    w.gateway.connect("n1");
    await w.runFor(3000);
    const after = w.fleetStore.tables.desired.get(d.id);
    expect(after?.haltedAt).toBe(T0);
    expect(after?.haltedReason).toBe(
      "convergence to 2.0.0 halted: 2 node(s) failed (n2, n3), the limit is 2",
    );
    const audit = w.store.tables.audits.filter((a) => a.action === "convergence.halt");
    expect(audit.map((a) => [a.actor, a.campaignId, a.message])).toEqual([
      ["control", `${d.id}-1`, `desired version ${d.id}: ${after?.haltedReason}`],
    ]);
    expect(w.halted).toEqual([d.id]);
    expect([...w.store.tables.campaigns.keys()]).toEqual([`${d.id}-1`]);
    w.unlisten();
  });

  it("a completed campaign's target becomes the desired version of its selector, once", async () => {
    const w = world(["n1"]);
    await finished(w.store, "c1", "alice", { n1: "succeeded" });
    await w.runFor(1000);
    const all = [...w.fleetStore.tables.desired.values()];
    expect(all.map((x) => [x.setBy, x.target.version, x.selector.pools, x.setAt])).toEqual([
      ["campaign:c1", "2.0.0", ["p"], T0 - 1000],
    ]);
    expect(w.store.tables.audits.filter((a) => a.action === "desired.record")).toHaveLength(1);
    await w.runFor(INTERVAL + 1000);
    expect(w.store.tables.audits.filter((a) => a.action === "desired.record")).toHaveLength(1);
    w.unlisten();
  });
});
