/**
 * The node commands (control/admin/node-commands.ts) on the memory adapter, as the simulated
 * operator runs them: what each writes to the registry and the audit log, nothing for a command
 * that changes nothing, and nothing at all when the node is unknown or the store is down.
 */
import { describe, expect, it } from "vitest";
import { disableNode, enableNode, resetNode } from "../../../control/admin/node-commands.js";
import { MemoryCampaignStore, MemoryFleetStore } from "../../../control/campaign-store/index.js";
import { ControlError } from "../../../control/errors.js";
import { ManualClock } from "../../../control/manual-clock.js";
import { CUTOFF_CHANNEL } from "../../../control/shared/notify-channels.js";

const T0 = Date.UTC(2031, 0, 1);
const actor = { name: "alice", ip: "10.0.0.9" };

function world() {
  const store = new MemoryCampaignStore(new ManualClock(T0));
  const fleet = new MemoryFleetStore(store);
  store.putNode({
    id: "n1",
    pool: "p",
    boot_id: "b",
    agent_version: "1.0.0",
    capabilities: ["upgrade.v1"],
    platform: "linux-amd64",
    enabled: true,
    last_seen: new Date(T0),
  });
  const cmd = (reason: string, at = 1000) => ({
    nodeId: "n1",
    reason,
    actor,
    now: new Date(T0 + at),
  });
  return { store, fleet, cmd };
}

describe("node commands over the memory admin store", () => {
  it("disables once with its audit row, then enables once with its own", async () => {
    const { store, fleet, cmd } = world();
    expect(await disableNode(fleet, cmd("bad disk"))).toBe(true);
    expect(store.tables.registry.get("n1")).toMatchObject({
      enabled: false,
      disabled_reason: "bad disk",
    });
    expect(await disableNode(fleet, cmd("again", 2000))).toBe(false);
    expect(await enableNode(fleet, cmd("", 3000))).toBe(true);
    expect(await enableNode(fleet, cmd("", 4000))).toBe(false);
    expect(store.tables.registry.get("n1")).toMatchObject({ enabled: true, disabled_reason: "" });
    expect(store.tables.audits).toEqual([
      {
        actor: "alice",
        actorIp: "10.0.0.9",
        action: "node.disable",
        nodeId: "n1",
        message: "node n1 disabled: bad disk",
        time: new Date(T0 + 1000),
      },
      {
        actor: "alice",
        actorIp: "10.0.0.9",
        action: "node.enable",
        nodeId: "n1",
        message: "node n1 enabled",
        time: new Date(T0 + 3000),
      },
    ]);
  });

  it("resets a node: marked reset, the reason kept to 1024 characters, its streams cut after commit", async () => {
    const { store, fleet, cmd } = world();
    const heard: string[] = [];
    const stop = store.listen([CUTOFF_CHANNEL], { onNotify: (_c, lines) => heard.push(...lines) });
    await resetNode(fleet, cmd("x".repeat(2000)));
    await new Promise((r) => setTimeout(r, 0));
    expect(heard).toEqual(["n1"]);
    expect(store.tables.registry.get("n1")?.reset_at).toEqual(new Date(T0 + 1000));
    const [audit] = store.tables.audits;
    expect(audit?.action).toBe("node.reset");
    expect(audit?.detail).toEqual({ reason: "x".repeat(1024) });
    expect(audit?.message).toBe(
      `node n1 reset: its node token no longer works and its next join-token enrollment is accepted once: ${"x".repeat(1024)}`,
    );
    await stop();
  });

  it("refuses an unknown node node_not_found and writes nothing", async () => {
    const { store, fleet } = world();
    for (const run of [disableNode, enableNode, resetNode]) {
      const error = await run(fleet, {
        nodeId: "ghost",
        reason: "",
        actor,
        now: new Date(T0),
      }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ControlError);
      expect(error).toMatchObject({ code: "node_not_found", message: 'no node with id "ghost"' });
    }
    expect(store.tables.audits).toEqual([]);
    expect(store.tables.registry.has("ghost")).toBe(false);
  });

  it("changes nothing while the store is down", async () => {
    const { store, fleet, cmd } = world();
    store.outage(true);
    await expect(disableNode(fleet, cmd("x"))).rejects.toThrow();
    store.outage(false);
    expect(store.tables.registry.get("n1")?.enabled).toBe(true);
    expect(store.tables.audits).toEqual([]);
  });
});
