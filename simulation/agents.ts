/**
 * The simulated fleet: agents that answer operations as a real Agent does (the procedures of
 * `agent-sim/operations.ts`: refuse below the confirmed sequence, ignore an id already handled
 * and re-report its last state, reinstate the previous release on rollback, raise the
 * confirmed sequence on confirm), each with a scripted behaviour, in virtual time; and the
 * network between them and the Controls, which is the worker's {@link WorkerGateway}.
 *
 * Streams: an agent is connected while its stream is open; a Control crash drops every
 * stream and agents reconnect with a delay; an operation sent on a stream arrives after a
 * small latency if that same stream is still open, else it is lost (the outbox re-sends it).
 */
import { create, fromBinary } from "@bufbuild/protobuf";
import type { Prng } from "../agent-sim/prng.js";
import type { AgentEvent, AgentEventListener, ConnectedNode } from "../control/agents/events.js";
import type { EncodedOperation } from "../control/agents/operation-frame.js";
import type { MemoryCampaignStore } from "../control/campaign-store/index.js";
import type { WorkerGateway } from "../control/campaign-worker/facts.js";
import type { ManualClock } from "../control/manual-clock.js";
import {
  ObservedStateSchema,
  type Operation,
  OperationPhase,
  OperationSchema,
} from "../proto/gen/agentcontrol/v1/agent_control_pb.js";
import type { EventQueue } from "./events.js";

/** How an agent answers an upgrade. */
export type Behaviour =
  | "succeed"
  | "refuse"
  | "fail"
  | "never_return"
  | "late_return"
  | "revert"
  | "config_fail"
  /** Enrolled, then gone for good before the campaign starts. */
  | "offline"
  | "flap"
  | "silent"
  | "crash_before_ack"
  | "dup_reports"
  | "no_cap"
  | "current";

/** How an agent answers a rollback. */
export type RollbackBehaviour = "reinstate" | "fail" | "silent";

/** One simulated agent's script. */
export interface AgentScript {
  readonly id: string;
  readonly pool: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly behaviour: Behaviour;
  readonly rollback: RollbackBehaviour;
  readonly stepMs: number;
  readonly restartMs: number;
  readonly configCapable: boolean;
  /** When it first connects (virtual ms). */
  readonly onlineAt: number;
}

interface Report {
  phase: OperationPhase;
  version: string;
  code: string;
  message: string;
}

/** A simulated agent's state (durable across its restarts). */
export interface SimAgent {
  readonly script: AgentScript;
  version: string;
  previousVersion: string;
  confirmedSequence: number;
  boot: number;
  /** Its open stream's number, or 0 when it has none. */
  session: number;
  /** Last report per handled operation id. */
  readonly handled: Map<string, Report | undefined>;
  /** How many times each operation was applied (at most once: invariant I7). */
  readonly applied: Map<string, number>;
  /** Confirmed sequences over time (never decreasing: invariant I8). */
  readonly confirmedHistory: number[];
  restarting: boolean;
  crashedOnce: boolean;
  /** A rollback whose REINSTATED is due once back. */
  pendingReinstate: string | undefined;
  configBroken: boolean;
  /** True while an operation is being handled; later ones wait in `waiting` (lost on restart). */
  busy: boolean;
  waiting: Operation[];
}

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
}

const LATENCY_MS = 5;

/** The fleet and the network: the Controls' gateway. */
export class SimFleet implements WorkerGateway {
  readonly agents = new Map<string, SimAgent>();
  /** I7 and I8 violations seen by the agents (an operation applied twice, a confirmed sequence going back). */
  readonly violations: string[] = [];
  private readonly listeners = new Set<AgentEventListener>();
  private sessions = 0;

  constructor(
    private readonly ctx: FleetContext,
    scripts: readonly AgentScript[],
    target: string,
  ) {
    for (const s of scripts) {
      const version = s.behaviour === "current" ? target : ctx.oldVersion;
      this.agents.set(s.id, {
        script: s,
        version,
        previousVersion: "",
        confirmedSequence: 1,
        boot: 0,
        session: 0,
        handled: new Map(),
        applied: new Map(),
        confirmedHistory: [1],
        restarting: false,
        crashedOnce: false,
        pendingReinstate: undefined,
        configBroken: false,
        busy: false,
        waiting: [],
      });
      ctx.store.putNode({
        id: s.id,
        pool: s.pool,
        boot_id: `${s.id}/boot-0`,
        agent_version: version,
        capabilities: capabilitiesOf(s),
        platform: ctx.platform,
        enabled: true,
        last_seen: null,
      });
      ctx.queue.at(s.onlineAt, () => this.connect(s.id));
      if (s.behaviour === "flap") this.scheduleFlap(s.id, s.onlineAt + 5000);
    }
  }

  // ---- WorkerGateway ----

  send(nodeId: string, operation: EncodedOperation): boolean {
    const a = this.agents.get(nodeId);
    if (a === undefined || a.session === 0) return false;
    const session = a.session;
    this.ctx.queue.at(this.ctx.clock.ms + LATENCY_MS, () => {
      if (a.session === session) this.deliver(a, fromBinary(OperationSchema, operation.bytes));
    });
    return true;
  }

  connected(nodeId: string): ConnectedNode | undefined {
    const a = this.agents.get(nodeId);
    if (a === undefined || a.session === 0) return undefined;
    return this.nodeOf(a);
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

  private nodeOf(a: SimAgent): ConnectedNode {
    return {
      nodeId: a.script.id,
      sessionId: `s${a.session}`,
      bootId: `${a.script.id}/boot-${a.boot}`,
      agentVersion: a.version,
      previousVersion: a.previousVersion,
      platform: this.ctx.platform,
      pool: a.script.pool,
      labels: a.script.labels,
      capabilities: capabilitiesOf(a.script),
      confirmedSequence: a.confirmedSequence,
      connectedAt: this.ctx.clock.now(),
    };
  }

  /** Opens the agent's stream (or retries later while no Control runs). */
  connect(nodeId: string): void {
    const a = this.agents.get(nodeId) as SimAgent;
    if (a.session !== 0 || a.restarting) return;
    if (!this.ctx.up()) {
      this.ctx.queue.at(this.ctx.clock.ms + this.backoff(), () => this.connect(nodeId));
      return;
    }
    a.session = ++this.sessions;
    const node = this.nodeOf(a);
    const row = this.ctx.store.tables.registry.get(nodeId);
    if (row !== undefined) {
      this.ctx.store.putNode({
        ...row,
        boot_id: node.bootId,
        agent_version: node.agentVersion,
        capabilities: [...node.capabilities],
        last_seen: node.connectedAt,
      });
    }
    this.emit({ kind: "connected", node });
    // Enrolled, then gone for good before anything is offered to it.
    if (a.script.behaviour === "offline") {
      this.ctx.queue.at(this.ctx.clock.ms + 500, () => this.goAway(nodeId));
      return;
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
      const session = a.session;
      this.ctx.queue.at(this.ctx.clock.ms + 1000, () => {
        if (a.session !== session) return;
        this.emit({
          kind: "config_status",
          nodeId,
          ok: false,
          message: "configuration does not apply (simulated)",
          at: this.ctx.clock.now(),
        });
      });
    }
  }

  /** Closes the agent's stream. */
  disconnect(nodeId: string, reason: string): void {
    const a = this.agents.get(nodeId) as SimAgent;
    if (a.session === 0) return;
    const sessionId = `s${a.session}`;
    a.session = 0;
    const row = this.ctx.store.tables.registry.get(nodeId);
    if (row !== undefined) this.ctx.store.putNode({ ...row, last_seen: this.ctx.clock.now() });
    this.emit({ kind: "disconnected", nodeId, sessionId, reason });
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
    this.disconnect(nodeId, "machine gone");
    a.restarting = true;
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
      if (at < 4 * 3_600_000)
        this.scheduleFlap(nodeId, at + 5000 + Math.floor(this.ctx.prng.next() * 15_000));
    });
  }

  // ---- the agent ----

  private report(a: SimAgent, opId: string, r: Report): void {
    a.handled.set(opId, r);
    if (a.session === 0) return;
    const send = () =>
      this.emit({
        kind: "observed",
        nodeId: a.script.id,
        observed: create(ObservedStateSchema, { operationId: opId, ...r }),
        at: this.ctx.clock.now(),
      });
    send();
    if (a.script.behaviour === "dup_reports") send();
  }

  private later(a: SimAgent, ms: number, run: () => void): void {
    const boot = a.boot;
    this.ctx.queue.at(this.ctx.clock.ms + ms, () => {
      if (a.boot === boot && !a.restarting) run();
    });
  }

  /** Restarts the agent process: its stream ends, it comes back with a new boot id. */
  private restart(a: SimAgent, ms: number, then?: () => void): void {
    this.disconnect(a.script.id, "restarting");
    a.restarting = true;
    a.busy = false;
    a.waiting = [];
    this.ctx.queue.at(this.ctx.clock.ms + ms, () => {
      a.restarting = false;
      a.boot++;
      then?.();
      this.connect(a.script.id);
    });
  }

  private deliver(a: SimAgent, op: Operation): void {
    const prior = a.handled.get(op.id);
    if (a.handled.has(op.id)) {
      if (prior !== undefined) this.report(a, op.id, prior);
      return;
    }
    if (a.busy) {
      if (!a.waiting.some((w) => w.id === op.id)) a.waiting.push(op);
      return;
    }
    this.handle(a, op);
  }

  /** The current operation is done: the next waiting one starts. */
  private done(a: SimAgent): void {
    a.busy = false;
    const next = a.waiting.shift();
    if (next !== undefined) this.deliver(a, next);
  }

  private handle(a: SimAgent, op: Operation): void {
    a.busy = true;
    switch (op.kind.case) {
      case "agentUpgrade":
        if (a.script.behaviour === "crash_before_ack" && !a.crashedOnce) {
          a.crashedOnce = true;
          this.restart(a, a.script.restartMs);
          return;
        }
        a.handled.set(op.id, undefined);
        this.upgrade(a, op.id, op.kind.value.version, Number(op.kind.value.sequence));
        return;
      case "agentRollback":
        a.handled.set(op.id, undefined);
        this.rollback(a, op.id, op.kind.value.version);
        return;
      case "agentConfirm": {
        a.handled.set(op.id, undefined);
        const { version, sequence } = op.kind.value;
        if (version !== a.version) {
          this.report(a, op.id, fail(a.version, "version_mismatch"));
          this.done(a);
          return;
        }
        this.apply(a, op.id);
        if (Number(sequence) > a.confirmedSequence) {
          a.confirmedSequence = Number(sequence);
          a.confirmedHistory.push(a.confirmedSequence);
        }
        const h = a.confirmedHistory;
        if (h.length > 1 && (h[h.length - 1] as number) < (h[h.length - 2] as number))
          this.violations.push(`I8: ${a.script.id}'s confirmed sequence went back`);
        this.report(a, op.id, {
          phase: OperationPhase.CONFIRMED,
          version: a.version,
          code: "",
          message: "",
        });
        this.done(a);
        return;
      }
      default:
        this.report(a, op.id, {
          phase: OperationPhase.REFUSED,
          version: a.version,
          code: "unknown_operation",
          message: "",
        });
        this.done(a);
    }
  }

  private apply(a: SimAgent, opId: string): void {
    const times = (a.applied.get(opId) ?? 0) + 1;
    a.applied.set(opId, times);
    if (times > 1) this.violations.push(`I7: ${a.script.id} applied ${opId} ${times} times`);
  }

  private upgrade(a: SimAgent, opId: string, version: string, sequence: number): void {
    const s = a.script;
    const from = a.version;
    const phase = (p: OperationPhase, v = version): Report => ({
      phase: p,
      version: v,
      code: "",
      message: "",
    });
    if (s.behaviour === "no_cap" || s.behaviour === "refuse") {
      this.report(a, opId, { ...phase(OperationPhase.REFUSED, from), code: "agent_refused" });
      this.done(a);
      return;
    }
    if (sequence < a.confirmedSequence) {
      this.report(a, opId, { ...phase(OperationPhase.REFUSED, from), code: "sequence_rollback" });
      this.done(a);
      return;
    }
    const steps = [
      OperationPhase.ACCEPTED,
      OperationPhase.DOWNLOADING,
      OperationPhase.VERIFYING,
      OperationPhase.APPLYING,
    ];
    const run = (i: number) => {
      if (i < steps.length) {
        this.report(a, opId, phase(steps[i] as OperationPhase));
        if (s.behaviour === "dup_reports" && i > 0) {
          // An older phase arrives again after a newer one.
          this.report(a, opId, phase(steps[i - 1] as OperationPhase));
          a.handled.set(opId, phase(steps[i] as OperationPhase));
        }
        if (s.behaviour === "silent" && i === 0) {
          this.disconnect(s.id, "stopped heartbeating");
          return;
        }
        this.later(a, s.stepMs, () => run(i + 1));
        return;
      }
      this.apply(a, opId);
      if (s.behaviour === "fail") {
        this.report(a, opId, { ...phase(OperationPhase.FAILED, from), code: "apply_failed" });
        this.done(a);
        return;
      }
      if (s.behaviour !== "revert") {
        a.previousVersion = from;
        a.version = version;
        a.configBroken = s.behaviour === "config_fail";
      }
      this.report(a, opId, phase(OperationPhase.RESTARTING));
      if (s.behaviour === "never_return") {
        this.disconnect(s.id, "gone");
        a.restarting = true;
        return;
      }
      const restartMs =
        s.behaviour === "late_return" ? this.ctx.lateAfterMs + s.restartMs : s.restartMs;
      this.restart(a, restartMs);
    };
    run(0);
  }

  private rollback(a: SimAgent, opId: string, version: string): void {
    const s = a.script;
    if (s.rollback === "silent") {
      this.done(a);
      return;
    }
    if (s.rollback === "fail") {
      this.report(a, opId, fail(a.version, "rollback_failed"));
      this.done(a);
      return;
    }
    const current = a.version;
    if (version !== "" && version === current) {
      this.report(a, opId, {
        phase: OperationPhase.REINSTATED,
        version: current,
        code: "",
        message: "already running this version",
      });
      this.done(a);
      return;
    }
    const previous = a.previousVersion;
    if (previous === "" && version === "") {
      this.report(a, opId, {
        phase: OperationPhase.REINSTATED,
        version: current,
        code: "",
        message: "no previous release",
      });
      this.done(a);
      return;
    }
    if (previous === "" || (version !== "" && version !== previous)) {
      this.report(a, opId, fail(current, "no_previous_version"));
      this.done(a);
      return;
    }
    this.report(a, opId, {
      phase: OperationPhase.ACCEPTED,
      version: previous,
      code: "",
      message: "",
    });
    this.apply(a, opId);
    a.version = previous;
    a.previousVersion = current;
    a.configBroken = false;
    a.pendingReinstate = opId;
    this.report(a, opId, {
      phase: OperationPhase.RESTARTING,
      version: previous,
      code: "",
      message: "",
    });
    this.restart(a, s.restartMs);
  }
}

function fail(version: string, code: string): Report {
  return { phase: OperationPhase.FAILED, version, code, message: `${code} (simulated)` };
}

/** The capabilities an agent negotiates. */
export function capabilitiesOf(s: AgentScript): string[] {
  if (s.behaviour === "no_cap") return [];
  return s.configCapable ? ["upgrade.v1", "config.v1"] : ["upgrade.v1"];
}
