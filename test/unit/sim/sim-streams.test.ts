/**
 * The simulation's agents reach Control through the real hub and session: a simulated agent
 * is welcomed, its registry row written as a Hello writes it, kept online by its heartbeats
 * at the Welcome's interval, and, once it hangs, judged offline by the hub after
 * `offlineAfterMs` of silence on the run's manual clock, its last-seen time written as the
 * last message it sent.
 */
import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../../../control/agents/events.js";
import { MemoryCampaignStore } from "../../../control/campaign-store/index.js";
import { createLogger } from "../../../control/log.js";
import { ManualClock } from "../../../control/manual-clock.js";
import { AgentStream } from "../../../simulation/agent-stream.js";
import { helloMessage, SimStreams } from "../../../simulation/sim-streams.js";

const OFFLINE_AFTER_MS = 30_000;
const HEARTBEAT_MS = 10_000;

const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

function run() {
  const clock = new ManualClock(0);
  const store = new MemoryCampaignStore(clock);
  store.putNode({
    id: "node-a",
    pool: "",
    boot_id: "node-a:boot-0",
    agent_version: "1.0.0",
    capabilities: ["upgrade.v1"],
    platform: "linux-amd64",
    enabled: true,
    last_seen: null,
    labels: {},
    confirmed_sequence: 1,
  });
  const streams = new SimStreams({
    clock,
    store,
    log: createLogger({ level: "silent" }),
    offlineAfterMs: OFFLINE_AFTER_MS,
    heartbeatIntervalMs: HEARTBEAT_MS,
  });
  const events: AgentEvent[] = [];
  streams.hub.subscribe((e) => events.push(e));
  const told = { welcomed: 0, ended: 0 };
  const open = (bootId: string) =>
    new AgentStream(
      streams,
      clock,
      "node-a",
      helloMessage({
        nodeId: "node-a",
        agentVersion: "1.2.0",
        previousVersion: "1.0.0",
        platform: "linux-amd64",
        bootId,
        capabilities: ["upgrade.v1"],
        labels: {},
        confirmedSequence: 3,
      }),
      {
        welcomed: () => {
          told.welcomed += 1;
        },
        operation: () => undefined,
        ended: () => {
          told.ended += 1;
        },
      },
    );
  const advanceTo = async (at: number) => {
    for (let due = clock.nextDue(); due !== undefined && due <= at; due = clock.nextDue()) {
      clock.advanceTo(due);
      await settle();
    }
    clock.advanceTo(at);
    await settle();
  };
  return { clock, store, streams, events, told, open, advanceTo };
}

describe("the simulation's stream layer", () => {
  it("welcomes a simulated agent and writes its row as a Hello does", async () => {
    const r = run();
    r.open("node-a:boot-1");
    await settle();
    expect(r.told.welcomed).toBe(1);
    expect(r.streams.hub.connected("node-a")?.bootId).toBe("node-a:boot-1");
    const row = r.store.tables.registry.get("node-a");
    expect(row?.agent_version).toBe("1.2.0");
    expect(row?.confirmed_sequence).toBe(3);
    expect(row?.last_seen).toEqual(new Date(0));
    await r.streams.stop();
  });

  it("keeps a heartbeating agent online, and a hanging one offline after offlineAfter of silence", async () => {
    const r = run();
    const stream = r.open("node-a:boot-1");
    await settle();
    await r.advanceTo(10 * 60_000);
    expect(r.streams.hub.connected("node-a")).toBeDefined();
    expect(r.streams.hub.lastSeenMs("node-a")).toBe(10 * 60_000);
    stream.hang();
    await r.advanceTo(10 * 60_000 + OFFLINE_AFTER_MS);
    expect(r.streams.hub.connected("node-a")).toBeDefined();
    await r.advanceTo(10 * 60_000 + OFFLINE_AFTER_MS + 1000);
    expect(r.streams.hub.connected("node-a")).toBeUndefined();
    expect(r.told.ended).toBe(1);
    const last = r.events.at(-1);
    expect(last?.kind === "disconnected" && last.reason).toBe(
      "no heartbeat for 30 s: node marked offline",
    );
    // The stream end is written with the last time the agent was heard.
    await r.advanceTo(10 * 60_000 + OFFLINE_AFTER_MS + 2000);
    expect(r.store.tables.registry.get("node-a")?.last_seen).toEqual(new Date(10 * 60_000));
    await r.streams.stop();
  });

  it("replaces an agent's stream by its newer one; the agent that dropped its own is not told", async () => {
    const r = run();
    const first = r.open("node-a:boot-1");
    await settle();
    r.open("node-a:boot-2");
    await settle();
    expect(r.streams.hub.connected("node-a")?.bootId).toBe("node-a:boot-2");
    expect(r.told).toEqual({ welcomed: 2, ended: 1 });
    expect(first.open).toBe(false);
    const dropped = r.open("node-a:boot-3");
    await settle();
    dropped.drop();
    await settle();
    expect(r.streams.hub.connected("node-a")).toBeUndefined();
    // Told of boot-1 and boot-2 being replaced; not of the stream it dropped itself.
    expect(r.told.ended).toBe(2);
    await r.streams.stop();
  });
});
