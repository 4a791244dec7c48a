/**
 * The agent server of the simulation: the real {@link AgentHub} and the real session of
 * `serveAgentStream`, on the run's manual clock, over {@link MemoryAgentCall}s. What the
 * database does for them in production (a Hello's row write, the batched liveness writes) is
 * done on the memory store's registry, so the worker reads the same rows it would read.
 */
import { create } from "@bufbuild/protobuf";
import { AgentHub, type LivenessStore } from "../control/agents/hub.js";
import { type SessionDeps, serveAgentStream } from "../control/agents/session.js";
import type { MemoryCampaignStore } from "../control/campaign-store/index.js";
import type { NodeHello, NodeStore } from "../control/db/node-store.js";
import type { Logger } from "../control/log.js";
import type { ManualClock } from "../control/manual-clock.js";
import {
  type AgentMessage,
  AgentMessageSchema,
} from "../proto/gen/agentcontrol/v1/agent_control_pb.js";
import { MemoryAgentCall, type MemoryAgentCallOptions } from "./memory-agent-call.js";

/** What the agent server needs of the run. */
export interface SimStreamsContext {
  readonly clock: ManualClock;
  readonly store: MemoryCampaignStore;
  readonly log: Logger;
  /** The hub closes a stream silent this long (the scenario's `offlineAfterMs`). */
  readonly offlineAfterMs: number;
  /** The heartbeat interval the Welcome asks for. */
  readonly heartbeatIntervalMs: number;
}

/** The real hub and sessions of one run. */
export class SimStreams {
  readonly hub: AgentHub;
  private readonly deps: SessionDeps;
  private handshakes = 0;

  /** Streams opened whose handshake has not ended yet (no Welcome, no status). */
  get handshaking(): number {
    return this.handshakes;
  }

  constructor(private readonly ctx: SimStreamsContext) {
    this.hub = new AgentHub({
      clock: ctx.clock,
      log: ctx.log,
      offlineAfterMs: ctx.offlineAfterMs,
      store: this.livenessStore(),
    });
    // The session reaches only `recordHello` of the node store: streams authenticate with
    // a node token, so no enrollment statement runs.
    const nodes = {
      recordHello: async (h: NodeHello, _s: string, now: Date) => this.hello(h, now),
    };
    this.deps = {
      hub: this.hub,
      nodes: nodes as unknown as NodeStore,
      clock: ctx.clock,
      log: ctx.log,
      authenticate: async (authorization) => ({
        kind: "node",
        nodeId: (authorization ?? "").replace(/^Bearer /, ""),
      }),
      capabilities: ["upgrade.v1", "config.v1", "defer.v1"],
      // The simulated fleet's labels are its scripts' own: believed, as a configured fleet's are.
      agentReportedLabels: ["*"],
      heartbeatIntervalMs: ctx.heartbeatIntervalMs,
      helloTimeoutMs: 10_000,
      sendQueueLength: 1024,
      messagesPerSecond: 1000,
      handshakes: { tryAcquire: () => true, release: () => undefined },
      streams: { tryAcquire: () => true, release: () => undefined },
      refused: () => undefined,
    };
  }

  /**
   * Opens a stream for `nodeId` (authenticated by its node token) and sends `hello` on it.
   * The Welcome, and the hub's `connected` event, follow once the handshake's promises ran.
   */
  open(nodeId: string, hello: AgentMessage, options: MemoryAgentCallOptions): MemoryAgentCall {
    this.handshakes += 1;
    let pending = true;
    const settled = () => {
      if (pending) this.handshakes -= 1;
      pending = false;
    };
    const call = new MemoryAgentCall({
      authorization: `Bearer ${nodeId}`,
      onMessage: (message) => {
        if (message.body.case === "welcome") settled();
        options.onMessage?.(message);
      },
      onStatus: (status) => {
        settled();
        options.onStatus?.(status);
      },
    });
    serveAgentStream(call.serverCall, this.deps);
    call.send(hello);
    return call;
  }

  /** Stops the hub's timers (the end of a run). */
  stop(): Promise<void> {
    return this.hub.stop();
  }

  private hello(hello: NodeHello, now: Date): void {
    const row = this.ctx.store.tables.registry.get(hello.nodeId);
    if (row === undefined) return;
    this.ctx.store.putNode({
      ...row,
      boot_id: hello.bootId,
      agent_version: hello.agentVersion,
      capabilities: [...hello.capabilities],
      last_seen: now,
      confirmed_sequence: hello.confirmedSequence,
    });
  }

  private livenessStore(): LivenessStore {
    const seen = (nodeId: string, lastSeen: Date) => {
      const row = this.ctx.store.tables.registry.get(nodeId);
      if (row === undefined) return;
      if (row.last_seen !== null && row.last_seen.getTime() >= lastSeen.getTime()) return;
      this.ctx.store.putNode({ ...row, last_seen: lastSeen });
    };
    return {
      flushSightings: async (entries) => {
        for (const e of entries) seen(e.nodeId, e.lastSeen);
      },
      flushStreamEnds: async (entries) => {
        for (const e of entries) seen(e.nodeId, e.lastSeen);
      },
    };
  }
}

/** The Hello of a simulated agent. */
export function helloMessage(hello: {
  readonly nodeId: string;
  readonly agentVersion: string;
  readonly previousVersion: string;
  readonly platform: string;
  readonly bootId: string;
  readonly capabilities: readonly string[];
  readonly labels: Readonly<Record<string, string>>;
  readonly confirmedSequence: number;
}): AgentMessage {
  return create(AgentMessageSchema, {
    body: {
      case: "hello",
      value: {
        ...hello,
        capabilities: [...hello.capabilities],
        labels: { ...hello.labels },
        confirmedSequence: BigInt(hello.confirmedSequence),
      },
    },
  });
}
