/**
 * A node an administrator disabled is never offered by the worker (I4), however many of a
 * batch's waiting nodes were disabled after the worker read their registry rows.
 */
import { describe, expect, it } from "vitest";
import { world } from "./worker-world.js";

describe("the campaign worker and disabled nodes", () => {
  it("never offers any of several nodes disabled after it loaded its working copy, one slot at a time", async () => {
    const w = world(["n1", "n2", "n3"]);
    await w.start("c1", ["n1", "n2", "n3"], { concurrency: 1, disruptionBudgetPercent: 100 });
    const worker = w.worker();
    worker.listen();
    await worker.step();
    expect(w.nodesOf("c1").map((n) => n.state)).toEqual(["waiting", "waiting", "waiting"]);
    for (const id of ["n1", "n2"]) {
      const row = w.store.tables.registry.get(id);
      if (row) w.store.putNode({ ...row, enabled: false });
    }
    for (const id of ["n1", "n2", "n3"]) w.gateway.connect(id);
    w.clock.advance(100);
    await worker.step();
    w.clock.advance(100);
    await worker.step();
    expect([...new Set(w.gateway.sent.map((s) => s.nodeId))]).toEqual(["n3"]);
    const states = w.nodesOf("c1").map((n) => [n.nodeId, n.state, n.code]);
    expect(states.sort()).toEqual([
      ["n1", "skipped", "node_disabled"],
      ["n2", "skipped", "node_disabled"],
      ["n3", "offered", undefined],
    ]);
  });
});
