/**
 * The simulated fleet: agents that answer operations as a real Agent does (the procedures of
 * `agent-sim/operations.ts`: refuse below the confirmed sequence, ignore an id already handled
 * and re-report its last state, reinstate the previous release on rollback, raise the
 * confirmed sequence on confirm), each with a scripted behaviour, in virtual time; and the
 * network between them and the Controls, which is the worker's {@link WorkerGateway}.
 *
 * Streams are production's: each agent opens a {@link MemoryAgentCall} to the real agent hub
 * and session ({@link SimStreams}) with its Hello, heartbeats at the Welcome's interval, and
 * sends its reports on it; connected, disconnected and offline are the hub's judgement on the
 * run's manual clock (a hanging agent is closed DEADLINE_EXCEEDED after `offlineAfterMs` of
 * silence). A Control crash drops every stream and agents reconnect with a delay, as they do
 * after Control ends their stream; an operation written on a stream arrives after a small
 * latency if that same stream is still open, else it is lost (the outbox re-sends it).
 */
import { create, fromBinary } from "@bufbuild/protobuf";
import type { Prng } from "../agent-sim/prng.js";
import type { AgentEvent, AgentEventListener, ConnectedNode } from "../control/agents/events.js";
import type { EncodedOperation } from "../control/agents/operation-frame.js";
import type { MemoryCampaignStore } from "../control/campaign-store/index.js";
import type { WorkerGateway } from "../control/campaign-worker/facts.js";
import type { Logger } from "../control/log.js";
import type { ManualClock } from "../control/manual-clock.js";
import {
  ObservedStateSchema,
  OperationPhase,
  OperationSchema,
} from "../proto/gen/agentcontrol/v1/agent_control_pb.js";
import { type AgentHost, deliver, endAct, wireOf } from "./agent-procedures.js";
import { type AgentScript, capabilitiesOf, type Report, type SimAgent } from "./agent-script.js";
import { type AgentBody, AgentStream } from "./agent-stream.js";
import type { EventQueue } from "./events.js";
import { endDownload, newAgentRecord } from "./ground-truth.js";
import type { History } from "./history.js";
import { scheduleLateRevert } from "./late-revert.js";
import { helloMessage, SimStreams } from "./sim-streams.js";

/** What the fleet needs of the world around it. */
export interface FleetContext {
  readonly clock: ManualClock;
  readonly queue: EventQueue;
  readonly store: MemoryCampaignStore;
  readonly prng: Prng;
  readonly oldVersion: string;
  readonly platform: string;
  /** Called on every agent event that may make a campaign due. */
  readonly kick: () => void;
  /** True while some Control process runs (agents can connect). */
  readonly up: () => boolean;
  /** Reconnect timeout of the campaigns (a late return comes after it). */
  readonly lateAfterMs: number;
  /** The hub closes a stream silent this long. */
  readonly offlineAfterMs: number;
  /** The virtual time the run starts at (epoch ms; 0 unless the scenario starts on a DST day). */
  readonly originMs: number;
  readonly log: Logger;
  /** The run's history, which the agents append to (`history.ts`). */
  readonly history?: History;
}

/** The heartbeat interval Control's Welcome asks for (SPEC's default). */
const HEARTBEAT_MS = 10_000;

const LATENCY_MS = 5;

/** The fleet and the network: the Controls' gateway. */
export class SimFleet implements WorkerGateway, AgentHost {
  readonly agents = new Map<string, SimAgent>();
  /** I7 and I8 violations seen by the agents (an operation applied twice, a confirmed sequence going back). */
  readonly violations: string[] = [];
  readonly lateAfterMs: number;
  /** The run's history (`history.ts`), if the world keeps one. */
  readonly history: History | undefined;
  private readonly listeners = new Set<AgentEventListener>();
  private sessions = 0;
  /** The agent server: the real hub and sessions. */
  readonly streams: SimStreams;
  /** Each agent's open stream (its end of it). */
  private readonly calls = new Map<string, AgentStream>();
  /** `vanish_after_upgrade` agents whose machine is due to go away. */
  private readonly vanishing = new Set<string>();
  /** Agents that hang: their stream stays open, and nothing more is sent on it. */
  private readonly hung = new Set<string>();
  /** Told when a `late_revert` agent schedules its revert, with the virtual time it reverts at. */
  onLateRevert: ((nodeId: string, at: number) => void) | undefined;

  constructor(
    private readonly ctx: FleetContext,
    scripts: readonly AgentScript[],
    target: string,
  ) {
    this.lateAfterMs = ctx.lateAfterMs;
    this.history = ctx.history;
    this.streams = new SimStreams({
      clock: ctx.clock,
      store: ctx.store,
      log: ctx.log,
      offlineAfterMs: ctx.offlineAfterMs,
      heartbeatIntervalMs: HEARTBEAT_MS,
    });
    this.streams.hub.subscribe((event) => this.emit(event));
    for (const s of scripts) {
      const version = s.initialVersion ?? (s.behaviour === "current" ? target : ctx.oldVersion);
      const confirmed = s.initialVersion === undefined ? 1 : 0;
      this.agents.set(s.id, {
        script: s,
        version,
        previousVersion: "",
        confirmedSequence: confirmed,
        boot: 0,
        session: 0,
        handled: new Map(),
        applied: new Map(),
        confirmedHistory: [confirmed],
        sequences: new Map(),
        restarting: false,
        crashedOnce: false,
        lateReverted: false,
        pendingReinstate: undefined,
        pendingFailure: undefined,
        configBroken: false,
        busy: false,
        waiting: [],
        record: newAgentRecord(version),
      });
      ctx.store.putNode({
        id: s.id,
        pool: s.pool,
        boot_id: `${s.id}:boot-0`,
        agent_version: version,
        capabilities: capabilitiesOf(s),
        platform: s.platform ?? ctx.platform,
        enabled: true,
        last_seen: null,
        labels: { ...s.labels },
        confirmed_sequence: confirmed,
      });
      ctx.queue.at(s.onlineAt, () => this.connect(s.id));
      if (s.behaviour === "flap") this.scheduleFlap(s.id, s.onlineAt + 5000);
    }
  }

  // ---- WorkerGateway ----

  send(nodeId: string, operation: EncodedOperation): boolean {
    const a = this.agents.get(nodeId);
    if (a !== undefined) {
      a.record.sent.push(
        wireOf(a, fromBinary(OperationSchema, operation.bytes), this.ctx.clock.ms),
      );
    }
    return this.streams.hub.send(nodeId, operation);
  }

  now(): number {
    return this.ctx.clock.ms;
  }

  /** Closes the node's stream on the hub (an administrator reset it); it reconnects with backoff. */
  cutOff(nodeId: string, message: string): void {
    this.streams.hub.cutOff(nodeId, message);
  }

  connected(nodeId: string): ConnectedNode | undefined {
    return this.streams.hub.connected(nodeId);
  }

  lastSeenMs(nodeId: string): number | undefined {
    return this.streams.hub.lastSeenMs(nodeId);
  }

  nodeIds(): Iterable<string> {
    return this.streams.hub.nodeIds();
  }

  subscribe(listener: AgentEventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  // ---- the network ----

  private emit(event: AgentEvent): void {
    for (const l of [...this.listeners]) l(event);
    this.ctx.kick();
  }

  private helloOf(a: SimAgent) {
    return helloMessage({
      nodeId: a.script.id,
      bootId: `${a.script.id}:boot-${a.boot}`,
      agentVersion: a.version,
      previousVersion: a.previousVersion,
      platform: a.script.platform ?? this.ctx.platform,
      labels: a.script.pool ? { ...a.script.labels, pool: a.script.pool } : a.script.labels,
      capabilities: capabilitiesOf(a.script),
      confirmedSequence: a.confirmedSequence,
    });
  }

  /** Opens the agent's stream (or retries later while no Control runs). */
  connect(nodeId: string): void {
    const a = this.agents.get(nodeId) as SimAgent;
    if (a.session !== 0 || a.restarting || this.hung.has(nodeId)) return;
    if (!this.ctx.up()) {
      this.ctx.queue.at(this.ctx.clock.ms + this.backoff(), () => this.connect(nodeId));
      return;
    }
    const session = ++this.sessions;
    a.session = session;
    a.record.connects.push({ at: this.ctx.clock.ms, boot: a.boot, version: a.version });
    this.history?.append({
      kind: "connect",
      at: this.ctx.clock.ms,
      nodeId,
      boot: a.boot,
      version: a.version,
    });
    // Back on a stream after the restart its operation made: no longer disrupted.
    if (a.acting !== undefined && a.boot > a.acting.boot) endAct(this, a);
    const stream = new AgentStream(this.streams, this.ctx.clock, nodeId, this.helloOf(a), {
      welcomed: () => this.welcomed(a, session),
      operation: (operation) =>
        this.ctx.queue.at(this.ctx.clock.ms + LATENCY_MS, () => {
          if (a.session === session) deliver(this, a, operation);
        }),
      // Control ended the stream: the agent reconnects with backoff (unless it hangs).
      ended: () => {
        if (a.session !== session) return;
        a.session = 0;
        this.calls.delete(nodeId);
        this.ctx.queue.at(this.ctx.clock.ms + this.backoff(), () => this.connect(nodeId));
      },
    });
    this.calls.set(nodeId, stream);
  }

  /** What an agent owes Control once welcomed on stream `session`. */
  private welcomed(a: SimAgent, session: number): void {
    if (a.session !== session) return;
    const nodeId = a.script.id;
    // Enrolled, then gone for good before anything is offered to it.
    if (a.script.behaviour === "offline") {
      this.ctx.queue.at(this.ctx.clock.ms + 500, () => this.goAway(nodeId));
      return;
    }
    scheduleLateRevert(this, a, (at) => this.onLateRevert?.(nodeId, at));
    // Back on the target after its upgrade, then its machine dies for good.
    if (
      a.script.behaviour === "vanish_after_upgrade" &&
      a.record.runs.length > 1 &&
      !this.vanishing.has(nodeId)
    ) {
      this.vanishing.add(nodeId);
      const vanish = () => {
        // Not in the middle of a restart (it would come back from it): once it is up.
        if (a.restarting) this.ctx.queue.at(this.ctx.clock.ms + 1000, vanish);
        else this.goAway(nodeId);
      };
      this.ctx.queue.at(this.ctx.clock.ms + (a.script.vanishAfterMs ?? 60_000), vanish);
    }
    if (a.pendingFailure !== undefined) {
      const id = a.pendingFailure;
      const failed = a.handled.get(id);
      a.pendingFailure = undefined;
      if (failed !== undefined) this.report(a, id, failed);
    }
    if (a.pendingReinstate !== undefined) {
      const id = a.pendingReinstate;
      a.pendingReinstate = undefined;
      this.report(a, id, {
        phase: OperationPhase.REINSTATED,
        version: a.version,
        code: "",
        message: "",
      });
    }
    if (a.configBroken && a.script.configCapable) {
      this.ctx.queue.at(this.ctx.clock.ms + 1000, () => {
        if (a.session !== session) return;
        a.record.configFailures.push(this.ctx.clock.ms);
        this.sendOn(a, {
          case: "configStatus",
          value: { ok: false, message: "configuration does not apply (simulated)" },
        });
      });
    }
  }

  /** Sends one message on the agent's open stream; nothing when it has none or hangs. */
  private sendOn(a: SimAgent, body: AgentBody): void {
    if (a.session !== 0) this.calls.get(a.script.id)?.send(body);
  }

  /** Closes the agent's stream (the agent cancels it, or its connection is lost). */
  disconnect(nodeId: string, _reason: string): void {
    const a = this.agents.get(nodeId) as SimAgent;
    if (a.session === 0) return;
    a.session = 0;
    this.calls.get(nodeId)?.drop();
    this.calls.delete(nodeId);
  }

  /**
   * The agent hangs: its stream stays open but nothing more comes on it, so Control's hub
   * judges it offline after `offlineAfterMs` of silence; it never reconnects.
   */
  hang(nodeId: string): void {
    this.hung.add(nodeId);
    this.calls.get(nodeId)?.hang();
  }

  /** A Control process died: every stream ends; agents come back after a delay. */
  dropAll(): void {
    for (const a of this.agents.values()) {
      if (a.session === 0) continue;
      this.disconnect(a.script.id, "control went away");
      this.ctx.queue.at(this.ctx.clock.ms + this.backoff(), () => this.connect(a.script.id));
    }
  }

  /** The agent's machine goes away for good (its stream ends and never comes back). */
  private goAway(nodeId: string): void {
    const a = this.agents.get(nodeId) as SimAgent;
    this.history?.append({ kind: "gone", at: this.ctx.clock.ms, nodeId });
    this.disconnect(nodeId, "machine gone");
    a.restarting = true;
    endDownload(a.record, this.ctx.clock.ms);
  }

  private backoff(): number {
    return 500 + Math.floor(this.ctx.prng.next() * 4500);
  }

  private scheduleFlap(nodeId: string, at: number): void {
    this.ctx.queue.at(at, () => {
      const a = this.agents.get(nodeId) as SimAgent;
      if (a.session !== 0) {
        this.disconnect(nodeId, "flap");
        this.ctx.queue.at(this.ctx.clock.ms + 1000 + Math.floor(this.ctx.prng.next() * 7000), () =>
          this.connect(nodeId),
        );
      }
      if (at < this.ctx.originMs + 4 * 3_600_000)
        this.scheduleFlap(nodeId, at + 5000 + Math.floor(this.ctx.prng.next() * 15_000));
    });
  }

  // ---- the agent ----

  /** Records the agent's latest report on an operation and sends it on its stream, if open. */
  report(a: SimAgent, opId: string, r: Report): void {
    a.handled.set(opId, r);
    // A result ends the disruption of the operation it answers.
    if (
      a.acting?.operationId === opId &&
      (r.phase === OperationPhase.FAILED ||
        r.phase === OperationPhase.REFUSED ||
        r.phase === OperationPhase.REINSTATED)
    )
      endAct(this, a);
    if (a.session !== 0) {
      a.record.reports.push({
        operationId: opId,
        phase: OperationPhase[r.phase] ?? String(r.phase),
        version: r.version,
        at: this.ctx.clock.ms,
      });
    }
    const send = () =>
      this.sendOn(a, {
        case: "observed",
        value: create(ObservedStateSchema, { operationId: opId, ...r }),
      });
    send();
    if (a.script.behaviour === "dup_reports") send();
  }

  /** Runs `run` after `ms` unless the agent restarted meanwhile. */
  later(a: SimAgent, ms: number, run: () => void): void {
    const boot = a.boot;
    this.ctx.queue.at(this.ctx.clock.ms + ms, () => {
      if (a.boot === boot && !a.restarting) run();
    });
  }

  /** Restarts the agent process: its stream ends, it comes back with a new boot id. */
  restart(a: SimAgent, ms: number, then?: () => void): void {
    this.disconnect(a.script.id, "restarting");
    a.restarting = true;
    endDownload(a.record, this.ctx.clock.ms);
    a.busy = false;
    a.waiting = [];
    this.ctx.queue.at(this.ctx.clock.ms + ms, () => {
      a.restarting = false;
      a.boot++;
      then?.();
      this.connect(a.script.id);
    });
  }
}
