/**
 * The campaign worker on the memory campaign store, a fake gateway and the manual clock: no
 * database, no sockets, no wall time.
 */
import { describe, expect, it } from "vitest";
import { WORKER_LEASE } from "../../../control/campaign-store/index.js";
import { OperationPhase } from "../../../proto/gen/agentcontrol/v1/agent_control_pb.js";
import { OFFLINE_AFTER, world } from "./worker-world.js";

describe("the campaign worker", () => {
  it("takes the lease, decides a campaign and sends its offers to connected nodes", async () => {
    const w = world(["n1", "n2"]);
    w.gateway.connect("n1");
    w.gateway.connect("n2");
    await w.start("c1", ["n1", "n2"], { disruptionBudgetPercent: 100 });
    const worker = w.worker();
    worker.listen();
    await worker.step();
    expect(worker.lease.epoch).toBe(1);
    expect(w.nodesOf("c1").map((n) => n.state)).toEqual(["offered", "offered"]);
    expect(w.gateway.sent.map((s) => s.kind)).toEqual(["agentUpgrade", "agentUpgrade"]);
  });

  it("does nothing while another holder leads, and takes over once that holder's session ended", async () => {
    const w = world(["n1"]);
    w.gateway.connect("n1");
    await w.start("c1", ["n1"]);
    const first = w.worker("w1");
    await first.step();
    const second = w.worker("w2");
    await second.step();
    expect(second.lease.epoch).toBeUndefined();
    w.store.endSession("w1");
    w.clock.advance(5000);
    await second.step();
    expect(second.lease.epoch).toBe(2);
  });

  it("ends its leadership when a fenced write is refused, and writes nothing", async () => {
    const w = world(["n1"]);
    await w.start("c1", ["n1"]);
    const worker = w.worker();
    worker.listen();
    await worker.step();
    const lease = w.store.tables.leases.get(WORKER_LEASE);
    if (lease) lease.holder = "someone-else";
    w.gateway.connect("n1");
    w.clock.advance(100);
    await worker.step();
    expect(worker.lease.epoch).toBeUndefined();
    expect(w.nodesOf("c1")[0]?.state).toBe("waiting");
    expect(w.gateway.sent).toEqual([]);
  });

  it("re-sends an unacknowledged offer when its node reconnects", async () => {
    const w = world(["n1"]);
    w.gateway.connect("n1");
    await w.start("c1", ["n1"]);
    const worker = w.worker();
    worker.listen();
    await worker.step();
    w.gateway.disconnect("n1");
    w.clock.advance(1000);
    w.gateway.connect("n1");
    await worker.step();
    expect(w.gateway.sent.map((s) => s.id)).toEqual(["c1/n1/upgrade", "c1/n1/upgrade"]);
  });

  it("takes reports through the store into the next decision", async () => {
    const w = world(["n1"]);
    w.gateway.connect("n1");
    await w.start("c1", ["n1"]);
    const worker = w.worker();
    worker.listen();
    await worker.step();
    w.gateway.report("n1", "c1/n1/upgrade", OperationPhase.REFUSED);
    w.clock.advance(100);
    await worker.step();
    expect(w.nodesOf("c1")[0]).toMatchObject({ state: "failed", code: "rejected" });
  });

  it("does not skip nodes as offline right after it became leader, only offlineAfter later", async () => {
    const w = world(["n1", "n2"]);
    await w.start("c1", ["n1", "n2"]);
    const worker = w.worker();
    worker.listen();
    await worker.step();
    w.clock.advance(OFFLINE_AFTER - 1000);
    await worker.step();
    expect(w.nodesOf("c1").map((n) => n.state)).toEqual(["waiting", "waiting"]);
    // Nothing wakes a campaign when a node turns offline: the periodic pass (5 s) sees it.
    w.clock.advance(5000);
    await worker.step();
    expect(w.nodesOf("c1").map((n) => n.code)).toEqual(["node_offline", "node_offline"]);
  });

  it("never offers a node disabled since its registry row was read", async () => {
    const w = world(["n1"]);
    await w.start("c1", ["n1"]);
    const worker = w.worker();
    worker.listen();
    await worker.step();
    const row = w.store.tables.registry.get("n1");
    if (row) w.store.putNode({ ...row, enabled: false });
    w.gateway.connect("n1");
    w.clock.advance(100);
    await worker.step();
    expect(w.gateway.sent).toEqual([]);
    expect(w.nodesOf("c1")[0]).toMatchObject({ state: "skipped", code: "node_disabled" });
  });

  it("counts the nodes other campaigns hold in flight against a shared pool's budget", async () => {
    const ids = Array.from({ length: 20 }, (_, i) => `n${String(i).padStart(2, "0")}`);
    const w = world(ids, () => "p");
    for (const id of ids) w.gateway.connect(id);
    for (let c = 0; c < 5; c++)
      await w.start(`c${c}`, ids.slice(c * 4, c * 4 + 4), { disruptionBudgetPercent: 10 });
    const worker = w.worker();
    worker.listen();
    await worker.step();
    const offered = [0, 1, 2, 3, 4]
      .flatMap((c) => w.nodesOf(`c${c}`))
      .filter((n) => n.state === "offered");
    expect(offered).toHaveLength(2);
  });

  it("runs on the Clock: run() sleeps until the next due time and steps when it is advanced", async () => {
    const w = world(["n1"]);
    w.gateway.connect("n1");
    const worker = w.worker();
    const stop = new AbortController();
    const running = worker.run(stop.signal);
    const settle = async () => {
      for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    };
    await settle();
    expect(worker.lease.epoch).toBe(1);
    await w.start("c1", ["n1"]);
    expect(w.gateway.sent).toEqual([]);
    // Written with no wake-up: found by the periodic read, every six intervals while the
    // worker decides no campaign (periodic-pass.ts).
    w.clock.advance(25_000);
    await settle();
    expect(w.gateway.sent).toEqual([]);
    w.clock.advance(5000);
    await settle();
    w.clock.advance(20);
    await settle();
    expect(w.gateway.sent.map((s) => s.id)).toEqual(["c1/n1/upgrade"]);
    stop.abort();
    w.clock.advance(1000);
    await running;
  });
});
