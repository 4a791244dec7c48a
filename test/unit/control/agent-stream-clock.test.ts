/**
 * The real AgentHub and AgentSession over an in-memory agent stream, on a manual clock:
 * liveness, the handshake timeout, stream replacement and the liveness writes follow the
 * injected clock alone. A node is offline after `offlineAfterMs` of silence counted from
 * when it was last heard (its Welcome, or its last message), never earlier.
 */
import { create } from "@bufbuild/protobuf";
import { status } from "@grpc/grpc-js";
import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../../../control/agents/events.js";
import { AgentHub } from "../../../control/agents/hub.js";
import { type SessionDeps, serveAgentStream } from "../../../control/agents/session.js";
import type { NodeStore, Sighting, StreamEnd } from "../../../control/db/node-store.js";
import { createLogger } from "../../../control/log.js";
import { ManualClock } from "../../../control/manual-clock.js";
import {
  type AgentMessage,
  AgentMessageSchema,
} from "../../../proto/gen/agentcontrol/v1/agent_control_pb.js";
import { MemoryAgentCall } from "../../../simulation/memory-agent-call.js";

const OFFLINE_AFTER_MS = 120_000;
const HELLO_TIMEOUT_MS = 10_000;
const START = 1_000_000;

/** Lets every continuation of the clock's resolved sleeps (and the fake store) run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

function hello(nodeId: string): AgentMessage {
  return create(AgentMessageSchema, {
    body: {
      case: "hello",
      value: {
        nodeId,
        agentVersion: "1.0.0",
        platform: "linux-amd64",
        bootId: "boot-1",
        capabilities: ["upgrade.v1"],
        labels: { pool: "default" },
      },
    },
  });
}

const heartbeat = (): AgentMessage =>
  create(AgentMessageSchema, { body: { case: "heartbeat", value: {} } });

function world() {
  const clock = new ManualClock(START);
  const sightings: Sighting[] = [];
  const ends: StreamEnd[] = [];
  const hellos: string[] = [];
  const log = createLogger({ level: "silent" });
  const hub = new AgentHub({
    clock,
    log,
    offlineAfterMs: OFFLINE_AFTER_MS,
    flushIntervalMs: 5000,
    endFlushDelayMs: 100,
    sightingWriteIntervalMs: 30_000,
    store: {
      flushSightings: async (entries) => void sightings.push(...entries),
      flushStreamEnds: async (entries) => void ends.push(...entries),
    },
  });
  const events: AgentEvent[] = [];
  hub.subscribe((event) => events.push(event));
  const nodes = {
    recordHello: async (h: { nodeId: string }) => void hellos.push(h.nodeId),
  } as unknown as NodeStore;
  const deps: SessionDeps = {
    hub,
    nodes,
    clock,
    agentReportedLabels: [],
    log,
    authenticate: async (authorization) => ({
      kind: "node",
      nodeId: (authorization ?? "").replace(/^Bearer /, ""),
    }),
    capabilities: ["upgrade.v1", "config.v1"],
    heartbeatIntervalMs: 10_000,
    helloTimeoutMs: HELLO_TIMEOUT_MS,
    sendQueueLength: 16,
    messagesPerSecond: 100,
    handshakes: { tryAcquire: () => true, release: () => undefined },
    streams: { tryAcquire: () => true, release: () => undefined },
    refused: () => undefined,
  };
  /** Moves the manual clock to `at`, firing every timer due on the way at its own time. */
  const advanceTo = async (at: number) => {
    for (let due = clock.nextDue(); due !== undefined && due <= at; due = clock.nextDue()) {
      clock.advanceTo(due);
      await settle();
    }
    clock.advanceTo(at);
    await settle();
  };
  /** Opens a stream for `nodeId` and sends its Hello; resolves once it is welcomed. */
  const connect = async (nodeId: string) => {
    const call = new MemoryAgentCall({ authorization: `Bearer ${nodeId}` });
    serveAgentStream(call.serverCall, deps);
    call.send(hello(nodeId));
    await settle();
    return call;
  };
  return { clock, hub, events, sightings, ends, hellos, advanceTo, connect, deps };
}

describe("the agent stream layer on a manual clock", () => {
  it("welcomes an agent over the in-memory stream and registers it in the hub", async () => {
    const w = world();
    const call = await w.connect("node-a");
    expect(call.received[0]?.body.case).toBe("welcome");
    expect(w.hub.connected("node-a")?.nodeId).toBe("node-a");
    expect(w.hellos).toEqual(["node-a"]);
    expect(w.events.map((e) => e.kind)).toEqual(["connected"]);
    await w.hub.stop();
  });

  it("keeps a heartbeating node online past offlineAfter, then closes it offline after that much silence", async () => {
    const w = world();
    const call = await w.connect("node-a");
    let lastHeard = START;
    for (let t = START + 10_000; t <= START + 300_000; t += 10_000) {
      await w.advanceTo(t);
      call.send(heartbeat());
      lastHeard = t;
    }
    expect(call.open).toBe(true);
    expect(w.hub.lastSeenMs("node-a")).toBe(lastHeard);
    // Silent from here: still online at exactly offlineAfter of silence…
    await w.advanceTo(lastHeard + OFFLINE_AFTER_MS);
    expect(call.open).toBe(true);
    expect(w.hub.connected("node-a")).toBeDefined();
    // …offline within one sweep (at most 1 s) after it.
    await w.advanceTo(lastHeard + OFFLINE_AFTER_MS + 1000);
    expect(call.status).toEqual({
      code: status.DEADLINE_EXCEEDED,
      details: "no heartbeat for 120 s: node marked offline",
    });
    expect(w.hub.connected("node-a")).toBeUndefined();
    const last = w.events.at(-1);
    expect(last?.kind === "disconnected" && last.reason).toBe(
      "no heartbeat for 120 s: node marked offline",
    );
    await w.hub.stop();
  });

  it("counts the silence of a node that never sends after its Welcome from the Welcome", async () => {
    const w = world();
    const call = await w.connect("node-a");
    await w.advanceTo(START + OFFLINE_AFTER_MS);
    expect(call.open).toBe(true);
    await w.advanceTo(START + OFFLINE_AFTER_MS + 1000);
    expect(call.status?.code).toBe(status.DEADLINE_EXCEEDED);
    await w.hub.stop();
  });

  it("replaces a node's stream by its newer one, and judges the newer one's silence on its own", async () => {
    const w = world();
    const first = await w.connect("node-a");
    await w.advanceTo(START + 60_000);
    const second = await w.connect("node-a");
    expect(first.status).toEqual({
      code: status.ABORTED,
      details: "replaced by a newer stream of the same node",
    });
    const secondSession = second.received[0]?.body;
    expect(secondSession?.case).toBe("welcome");
    expect(w.hub.connected("node-a")?.sessionId).toBe(
      secondSession?.case === "welcome" ? secondSession.value.sessionId : "",
    );
    // The replaced stream's end neither disconnects the node nor records a stream end.
    expect(w.events.map((e) => e.kind)).toEqual(["connected", "connected"]);
    await w.advanceTo(START + 60_000 + OFFLINE_AFTER_MS);
    expect(second.open).toBe(true);
    await w.advanceTo(START + 60_000 + OFFLINE_AFTER_MS + 1000);
    expect(second.status?.code).toBe(status.DEADLINE_EXCEEDED);
    await w.hub.stop();
  });

  it("ends a stream without Hello after the handshake timeout of the manual clock, not before", async () => {
    const w = world();
    const call = new MemoryAgentCall({ authorization: "Bearer node-a" });
    serveAgentStream(call.serverCall, w.deps);
    await w.advanceTo(START + HELLO_TIMEOUT_MS - 1);
    expect(call.open).toBe(true);
    await w.advanceTo(START + HELLO_TIMEOUT_MS);
    expect(call.status).toEqual({
      code: status.INVALID_ARGUMENT,
      details: "no Hello within the handshake timeout",
    });
    expect(w.hellos).toEqual([]);
    await w.hub.stop();
  });

  it("writes a stream's end, with its exact last-seen time, within endFlushDelay of the manual clock", async () => {
    const w = world();
    const call = await w.connect("node-a");
    await w.advanceTo(START + 1234);
    call.send(heartbeat());
    call.cancel();
    await settle();
    expect(w.ends).toEqual([]);
    await w.advanceTo(START + 1234 + 100);
    expect(w.ends).toEqual([
      { nodeId: "node-a", sessionId: expect.any(String), lastSeen: new Date(START + 1234) },
    ]);
    await w.hub.stop();
  });

  it("closes the stream of an agent that stops reading once its send queue is full", async () => {
    const w = world();
    const call = await w.connect("node-a");
    call.stopReading();
    const operation = { id: "op-1", bytes: new Uint8Array() };
    const queued: boolean[] = [];
    for (let i = 0; i < 18; i++) queued.push(w.hub.send("node-a", operation));
    // The first write is taken (and reports back-pressure), 16 wait, the next one is refused.
    expect(queued.filter(Boolean)).toHaveLength(17);
    expect(call.status).toEqual({
      code: status.RESOURCE_EXHAUSTED,
      details: "agent is not reading its stream: send queue full",
    });
    expect(w.hub.connected("node-a")).toBeUndefined();
    await w.hub.stop();
  });

  it("leaves no timer of its own on the clock once stopped and its streams ended", async () => {
    const w = world();
    const call = await w.connect("node-a");
    expect(w.clock.nextDue()).toBeDefined();
    w.hub.closeAll(status.UNAVAILABLE, "Control is shutting down: reconnect with backoff");
    await w.hub.stop();
    expect(call.status?.code).toBe(status.UNAVAILABLE);
    expect(w.clock.nextDue()).toBeUndefined();
  });

  it("writes a live node's last-seen time once it is sightingWriteInterval old, at the next flush", async () => {
    const w = world();
    const call = await w.connect("node-a");
    await w.advanceTo(START + 29_000);
    call.send(heartbeat());
    await w.advanceTo(START + 40_000);
    expect(w.sightings).toEqual([]);
    call.send(heartbeat());
    await w.advanceTo(START + 46_000);
    expect(w.sightings).toEqual([{ nodeId: "node-a", lastSeen: new Date(START + 40_000) }]);
    await w.hub.stop();
  });
});
