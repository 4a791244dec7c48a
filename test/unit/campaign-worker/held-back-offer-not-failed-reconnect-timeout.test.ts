/**
 * An unacknowledged upgrade is not re-sent while Control holds it back (paused, outside the
 * windows, aborted, node disabled: `upgradeHeldBack`, resend-rules.ts). A node that never
 * received such an offer (its stream was on another Control that died before delivering it) and
 * is online here on the boot it was offered on is not failed `reconnect_timeout` at its deadline
 * ("did not reconnect with 2.0.0"), a failure of a release it never got that would count toward
 * its batch's threshold: it waits again and is offered afresh once the offer may go, or is
 * canceled as its campaign's waiting nodes were.
 */
import { describe, expect, it } from "vitest";
import { windowsOf } from "../campaign/windows-of.js";
import { OLD, world } from "./worker-world.js";

const elsewhere = (w: ReturnType<typeof world>, id: string) =>
  w.store.putNode({
    id,
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

describe("an offer recorded but never delivered, then held back by a pause or a closed window", () => {
  it("does not fail its node reconnect_timeout while the pause holds the offer back", async () => {
    const w = world(["n1"]);
    elsewhere(w, "n1");
    await w.start("c1", ["n1"], { disruptionBudgetPercent: 100, failureThresholdPercent: 0 });
    const worker = w.worker();
    worker.listen();
    await worker.step();
    expect(w.nodesOf("c1")[0]?.state).toBe("offered");
    expect(w.gateway.sent).toEqual([]);
    w.store.tables.addCommand({
      campaignId: "c1",
      kind: "pause",
      rollback: false,
      reason: "look at the dashboards",
      actor: "alice",
      actor_ip: "",
    });
    worker.wake("c1");
    w.clock.advance(1000);
    await worker.step();
    expect(w.store.tables.campaigns.get("c1")?.campaign.phase).toBe("paused");
    // n1 reconnects here (its other Control is gone), online and heartbeating, on 1.0.0.
    w.clock.advance(5_000);
    w.gateway.connect("n1", "b0", OLD);
    for (let t = 0; t < 15; t++) {
      w.clock.advance(60_000);
      await worker.step();
    }
    expect(w.gateway.sent.filter((s) => s.kind === "agentUpgrade")).toEqual([]);
    const n = w.nodesOf("c1")[0];
    const c = w.store.tables.campaigns.get("c1")?.campaign;
    // Not a failure of the release (it never received it), and no breach.
    expect({
      failure: n?.state === "failed" || n?.state === "timed_out",
      code: n?.code,
      phase: c?.phase,
    }).toEqual({
      failure: false,
      code: undefined,
      phase: "paused",
    });
    // Resumed: offered afresh, the same operation, and delivered now.
    w.store.tables.addCommand({
      campaignId: "c1",
      kind: "resume",
      rollback: false,
      reason: "looks fine",
      actor: "alice",
      actor_ip: "",
    });
    worker.wake("c1");
    w.clock.advance(1000);
    await worker.step();
    expect(w.nodesOf("c1")[0]?.state).toBe("offered");
    expect(w.gateway.sent.filter((s) => s.kind === "agentUpgrade").length).toBeGreaterThan(0);
  });

  it("does not fail its node reconnect_timeout while the closed window holds the offer back", async () => {
    // The world's clock starts at 1970-01-01 00:16:40 UTC: inside 00:00-00:30.
    const w = world(["n1"]);
    elsewhere(w, "n1");
    await w.start("c1", ["n1"], {
      disruptionBudgetPercent: 100,
      failureThresholdPercent: 0,
      windows: windowsOf("00:00-00:30"),
    });
    const worker = w.worker();
    worker.listen();
    await worker.step();
    expect(w.nodesOf("c1")[0]?.state).toBe("offered");
    // The window closes at 00:30; n1 reconnects here at 00:31.
    w.clock.advance(14 * 60_000 + 20_000);
    w.gateway.connect("n1", "b0", OLD);
    for (let t = 0; t < 15; t++) {
      w.clock.advance(60_000);
      await worker.step();
    }
    expect(w.gateway.sent.filter((s) => s.kind === "agentUpgrade")).toEqual([]);
    const n = w.nodesOf("c1")[0];
    const c = w.store.tables.campaigns.get("c1")?.campaign;
    // Not a failure of the release (it never received it), and no breach.
    expect({
      failure: n?.state === "failed" || n?.state === "timed_out",
      code: n?.code,
      phase: c?.phase,
    }).toEqual({
      failure: false,
      code: undefined,
      phase: "running",
    });
  });

  it("does not record a failure of the release for it after an abort held the offer back", async () => {
    const w = world(["n1"]);
    elsewhere(w, "n1");
    await w.start("c1", ["n1"], { disruptionBudgetPercent: 100 });
    const worker = w.worker();
    worker.listen();
    await worker.step();
    expect(w.nodesOf("c1")[0]?.state).toBe("offered");
    w.store.tables.addCommand({
      campaignId: "c1",
      kind: "abort",
      rollback: false,
      reason: "wrong release",
      actor: "alice",
      actor_ip: "",
    });
    worker.wake("c1");
    w.clock.advance(1000);
    await worker.step();
    w.clock.advance(5_000);
    w.gateway.connect("n1", "b0", OLD);
    for (let t = 0; t < 15; t++) {
      w.clock.advance(60_000);
      await worker.step();
    }
    expect(w.gateway.sent.filter((s) => s.kind === "agentUpgrade")).toEqual([]);
    const n = w.nodesOf("c1")[0];
    // It never received the upgrade: canceled (aborted) rather than failed "did not reconnect with 2.0.0".
    expect({ state: n?.state, code: n?.code }).toEqual({ state: "canceled", code: "aborted" });
  });

  it("skips its node node_disabled once an administrator disabled it, not failed", async () => {
    const w = world(["n1"]);
    elsewhere(w, "n1");
    await w.start("c1", ["n1"], { disruptionBudgetPercent: 100, failureThresholdPercent: 0 });
    const worker = w.worker();
    worker.listen();
    await worker.step();
    expect(w.nodesOf("c1")[0]?.state).toBe("offered");
    const row = w.store.tables.registry.get("n1");
    if (row) w.store.putNode({ ...row, enabled: false, online: false, held_by: null });
    w.clock.advance(5_000);
    w.gateway.connect("n1", "b0", OLD);
    for (let t = 0; t < 15; t++) {
      w.clock.advance(60_000);
      await worker.step();
    }
    expect(w.gateway.sent.filter((s) => s.kind === "agentUpgrade")).toEqual([]);
    const n = w.nodesOf("c1")[0];
    expect({ state: n?.state, code: n?.code }).toEqual({ state: "skipped", code: "node_disabled" });
  });
});
