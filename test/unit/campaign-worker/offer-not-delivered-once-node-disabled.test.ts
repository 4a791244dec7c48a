/**
 * "A disabled node is never offered" (docs/decisions.md) holds for an offer recorded before the
 * disable and not yet delivered: the outbox judges a re-send as a first delivery
 * (`upgradeHeldBack`, resend-rules.ts), and a node disabled since is not sent it. Here the
 * node's stream was on another Control that died before delivering the offer, and the node
 * reconnects here after the operator disabled it.
 */
import { describe, expect, it } from "vitest";
import { OLD, world } from "./worker-world.js";

describe("an offer recorded but not delivered before the node was disabled", () => {
  it("is not sent to the node once an administrator disabled it", async () => {
    const w = world(["n1"]);
    // n1's stream is on another Control (its registry row says so): the leader offers it, and
    // the send here reaches nobody (the other Control dies before delivering).
    w.store.putNode({
      id: "n1",
      pool: "",
      boot_id: "b0",
      agent_version: OLD,
      capabilities: ["upgrade.v1"],
      platform: "linux-amd64",
      enabled: true,
      last_seen: w.clock.now(),
      online: true,
      held_by: "control-2",
    });
    await w.start("c1", ["n1"], { disruptionBudgetPercent: 100 });
    const worker = w.worker();
    worker.listen();
    await worker.step();
    expect(w.nodesOf("c1")[0]?.state).toBe("offered");
    expect(w.gateway.sent).toEqual([]);
    // The operator disables n1 ("keep this machine out of every campaign").
    const row = w.store.tables.registry.get("n1");
    if (row) w.store.putNode({ ...row, enabled: false, online: false, held_by: null });
    w.clock.advance(1000);
    await worker.step();
    // n1 reconnects here and is welcomed.
    w.clock.advance(60_000);
    w.gateway.connect("n1", "b0", OLD);
    w.clock.advance(100);
    await worker.step();
    w.clock.advance(40_000);
    await worker.step();
    expect(w.gateway.sent.filter((s) => s.kind === "agentUpgrade")).toEqual([]);
  });
});
