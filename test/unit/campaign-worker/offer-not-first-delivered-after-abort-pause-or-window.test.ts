/**
 * No Agent first receives an upgrade after its campaign was aborted, while it is paused, or
 * outside its maintenance windows (SPEC §4, O4, W1), even when the offer was recorded before:
 * an unacknowledged upgrade (its node's stream was on another Control, so the send reached
 * nobody) is re-sent only while its campaign offers (`worthResending`, resend-rules.ts).
 * Found by the engine review (R08): the outbox re-sent it whenever the node was `offered`.
 */
import { describe, expect, it } from "vitest";
import { windowsOf } from "../campaign/windows-of.js";
import { OLD, world } from "./worker-world.js";

describe("an offer recorded but not delivered before an abort, a pause or a window's close", () => {
  it("is not sent once the campaign is aborted", async () => {
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
    // The operator aborts (no rollback).
    w.store.tables.addCommand({
      campaignId: "c1",
      kind: "abort",
      rollback: false,
      reason: "stop",
      actor: "alice",
      actor_ip: "",
    });
    worker.wake("c1");
    w.clock.advance(1000);
    await worker.step();
    const c = w.store.tables.campaigns.get("c1")?.campaign;
    expect(c?.phase).toBe("aborted");
    // n1 reconnects here (its other Control is gone) and is welcomed.
    w.clock.advance(60_000);
    w.gateway.connect("n1", "b0", OLD);
    w.clock.advance(100);
    await worker.step();
    w.clock.advance(40_000);
    await worker.step();
    expect(w.gateway.sent.filter((s) => s.kind === "agentUpgrade")).toEqual([]);
  });
  it("is not sent while the campaign is paused (no new offers)", async () => {
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
    // The operator pauses.
    w.store.tables.addCommand({
      campaignId: "c1",
      kind: "pause",
      rollback: false,
      reason: "stop",
      actor: "alice",
      actor_ip: "",
    });
    worker.wake("c1");
    w.clock.advance(1000);
    await worker.step();
    const c = w.store.tables.campaigns.get("c1")?.campaign;
    expect(c?.phase).toBe("paused");
    // n1 reconnects here (its other Control is gone) and is welcomed.
    w.clock.advance(60_000);
    w.gateway.connect("n1", "b0", OLD);
    w.clock.advance(100);
    await worker.step();
    w.clock.advance(40_000);
    await worker.step();
    expect(w.gateway.sent.filter((s) => s.kind === "agentUpgrade")).toEqual([]);
  });

  it("is not first delivered after every window of its campaign closed", async () => {
    // The world's clock starts at 1970-01-01 00:16:40 UTC: inside 00:00-00:30.
    const w = world(["n1"]);
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
    await w.start("c1", ["n1"], {
      disruptionBudgetPercent: 100,
      windows: windowsOf("Mon-Sun 00:00-00:30 UTC"),
      reconnectTimeoutMs: 3_600_000,
    });
    const worker = w.worker();
    worker.listen();
    await worker.step();
    expect(w.nodesOf("c1")[0]?.state).toBe("offered");
    // 00:36:40, the window closed at 00:30; n1 reconnects here (within its reconnect timeout).
    w.clock.advance(20 * 60_000);
    w.gateway.connect("n1", "b0", OLD);
    w.clock.advance(100);
    await worker.step();
    expect(w.gateway.sent.filter((s) => s.kind === "agentUpgrade")).toEqual([]);
  });
});
