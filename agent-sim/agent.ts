/**
 * One simulated Agent: who it is, what it keeps, how it answers Control. Its connect /
 * backoff / restart loop is {@link AgentLifecycle}; operations are handled by
 * `handleOperation`; heartbeats come from the fleet's shared ticker.
 */
import type { status as GrpcStatus } from "@grpc/grpc-js";
import type { Logger } from "pino";
import type { DownloadResult } from "../agent/core/download.js";
import {
  type DurableState,
  enrollmentKeyOf,
  type ReportedState,
  SaveQueue,
} from "../agent/core/durable-state.js";
import {
  configStatusMessage,
  heartbeatMessage,
  heartbeatMsOf,
  helloMessage,
  observedMessage,
} from "../agent/core/messages.js";
import {
  type Applier,
  type ArtifactRequest,
  deliverOperation,
  type OperationHost,
  type RestartKind,
  reportPending,
  reportReinstated,
} from "../agent/core/operations.js";
import {
  type AgentMessage,
  type Operation,
  OperationPhase,
  type Welcome,
} from "../proto/gen/agentcontrol/v1/agent_control_pb.js";
import { fetchArtifactFor } from "./artifact-fetch.js";
import type { AgentBehaviour } from "./behaviours.js";
import { AgentLifecycle, type LifecycleHost } from "./lifecycle.js";
import { createPrng, deriveSeed, intBetween, type Prng } from "./prng.js";
import type { AgentRuntime } from "./runtime.js";
import { type HealthTrial, revertFailedTrial, simApplier } from "./sim-applier.js";
import { StreamTimers } from "./stream-timers.js";
import type { Tickable } from "./ticker.js";

/** The capabilities a simulated agent offers unless told otherwise. */
export const DEFAULT_CAPABILITIES: readonly string[] = Object.freeze([
  "upgrade.v1",
  "config.v1",
  "defer.v1",
]);

/** Who an agent is; `state` (loaded or fresh) holds what it keeps across restarts. */
export interface AgentSpec {
  readonly nodeId: string;
  readonly platform: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly capabilities: readonly string[];
  readonly behaviour: AgentBehaviour;
  /** Seeds the agent's own PRNG (restart delays, flap periods). */
  readonly seed: number;
  readonly state: DurableState;
}

interface WelcomeInfo {
  sessionId: string;
  capabilities: readonly string[];
  heartbeatMs: number;
}

/** A simulated Agent. Made by `startFleet`; every method is safe to call at any time. */
export class SimulatedAgent implements LifecycleHost, OperationHost, Tickable {
  /** The node id it introduces itself with. */
  readonly nodeId: string;
  /** Its platform, e.g. `linux-amd64`. */
  readonly platform: string;
  /** Its labels (sent in Hello). */
  readonly labels: Readonly<Record<string, string>>;
  /** The capabilities it offers before negotiation (upgrade.v1 is withheld by no-upgrade-cap). */
  readonly offeredCapabilities: readonly string[];
  /** @internal Durable state; read it through the getters. */
  readonly state: DurableState;
  /** @internal */
  readonly runtime: AgentRuntime;
  /** @internal An upgrade is in progress. */
  busy = false;
  /** Welcomes received since start. */
  welcomes = 0;
  /** Heartbeats sent since start. */
  heartbeats = 0;
  /** Redelivered operations answered from memory instead of applied again. */
  duplicates = 0;
  #behaviour: AgentBehaviour;
  #welcome: WelcomeInfo | undefined;
  #write: ((message: AgentMessage) => void) | undefined;
  readonly #timers = new StreamTimers();
  readonly #applications = new Map<string, number>();
  readonly #rng: Prng;
  /** Draws whether a deferring agent defers an offer (apart from the restart delays). */
  readonly #deferRng: Prng;
  /** The upgrade whose version fails its health check at the next restart (health-fail). */
  #trial: HealthTrial | undefined;
  readonly #lifecycle: AgentLifecycle;
  readonly #saves: SaveQueue;
  #operations: Promise<void> = Promise.resolve();
  #log: Logger | undefined;
  /** @internal What applying means for this agent (its scripted behaviour). */
  readonly applier: Applier;

  /** @internal Use `startFleet`. */
  constructor(spec: AgentSpec, runtime: AgentRuntime) {
    this.nodeId = spec.nodeId;
    this.platform = spec.platform;
    this.labels = spec.labels;
    this.offeredCapabilities = spec.capabilities;
    this.state = spec.state;
    this.runtime = runtime;
    this.#behaviour = { ...spec.behaviour };
    this.#rng = createPrng(spec.seed);
    this.#deferRng = createPrng(deriveSeed(spec.seed, 1));
    this.#lifecycle = new AgentLifecycle(this, runtime, this.#rng, !spec.behaviour.offline);
    this.applier = simApplier({
      behaviour: () => this.#behaviour,
      state: spec.state,
      failVersions: runtime.settings.failVersions,
      onHealthTrial: (trial) => {
        this.#trial = trial;
      },
    });
    this.#saves = new SaveQueue(runtime.store, spec.state, (error) =>
      this.log.error({ err: error }, "could not save agent state"),
    );
  }

  /** The version it runs (or is restarting into). */
  get version(): string {
    return this.state.version;
  }
  /** The version a rollback would reinstate ("" when none). */
  get previousVersion(): string {
    return this.state.previousVersion;
  }
  /** The durable confirmed sequence: releases below it are refused. */
  get confirmedSequence(): bigint {
    return BigInt(this.state.confirmedSequence);
  }
  /** Changes at every simulated start and restart. */
  get bootId(): string {
    return this.#lifecycle.bootId;
  }
  /** A stream is open (Hello sent). */
  get connected(): boolean {
    return this.#write !== undefined;
  }
  /** The current stream has been welcomed. */
  get welcomed(): boolean {
    return this.#welcome !== undefined;
  }
  /** The current stream's session id ("" when not welcomed). */
  get sessionId(): string {
    return this.#welcome?.sessionId ?? "";
  }
  /** The capabilities negotiated on the current stream (empty when not welcomed). */
  get capabilities(): readonly string[] {
    return this.#welcome?.capabilities ?? [];
  }
  /** The heartbeat period it follows on the current stream, in ms (after heartbeatScale). */
  get heartbeatMs(): number | undefined {
    return this.#welcome?.heartbeatMs;
  }
  /** It holds a node token (it has enrolled). */
  get hasNodeToken(): boolean {
    return this.state.nodeToken !== undefined;
  }
  /** It means to be connected (not offline, not gone after a no-return restart, not stopped). */
  get online(): boolean {
    return this.#lifecycle.online;
  }
  /** It is between RESTARTING and its next start. */
  get restarting(): boolean {
    return this.#lifecycle.restarting;
  }
  /** Streams opened since start. */
  get connects(): number {
    return this.#lifecycle.connects;
  }
  /** The gRPC status code its last stream ended with, if any. */
  get lastStatus(): GrpcStatus | undefined {
    return this.#lifecycle.lastStatus;
  }
  /** Its scripted behaviour (read-only view; change it with {@link setBehaviour}). */
  get behaviour(): Readonly<AgentBehaviour> {
    return this.#behaviour;
  }
  /** @internal Aborted when the agent stops. */
  get signal(): AbortSignal {
    return this.#lifecycle.signal;
  }

  /** How many times operation `opId` took effect; idempotent delivery keeps it ≤ 1. */
  applyCount(opId: string): number {
    return this.#applications.get(opId) ?? 0;
  }
  /** Extra applications over all operations (0 unless idempotency is broken). */
  duplicateApplications(): number {
    let extra = 0;
    for (const count of this.#applications.values()) extra += Math.max(0, count - 1);
    return extra;
  }
  /** The last ObservedState it reported for `opId`, if it handled it. */
  lastReport(opId: string): Readonly<ReportedState> | undefined {
    const report = this.state.handled[opId];
    return report?.phase === OperationPhase.UNSPECIFIED ? undefined : report;
  }

  /** Changes its behaviour from now on (the offered capabilities change at the next Hello). */
  setBehaviour(change: Partial<AgentBehaviour>): void {
    this.#behaviour = { ...this.#behaviour, ...change };
  }
  /** Drops the stream at once, as a network failure would; it reconnects with backoff. */
  disconnect(): void {
    this.#lifecycle.disconnect();
  }
  /** Connects if offline (or gone after a no-return restart). */
  goOnline(): void {
    this.#lifecycle.goOnline();
  }
  /** Drops the stream and stays away until {@link goOnline}. */
  goOffline(): void {
    this.#lifecycle.goOffline();
  }
  /** Closes its stream and channel cleanly and ends it for good. */
  stop(): Promise<void> {
    return this.#lifecycle.stop();
  }
  /** @internal Starts it; aborting `signal` stops it. */
  start(signal: AbortSignal): void {
    this.#lifecycle.start(signal);
  }

  /** @internal The pins and threshold the fleet trusts, and its shared verifier. */
  get trust(): OperationHost["trust"] {
    const { settings, verifier } = this.runtime;
    return { verifier, pins: settings.pins, threshold: settings.threshold };
  }
  /** @internal */
  get stepMs(): number {
    return this.runtime.settings.stepMs;
  }
  /** @internal As the fleet is set up ({@link fetchArtifactFor}). */
  fetch(artifact: ArtifactRequest, signal: AbortSignal): Promise<DownloadResult> | undefined {
    return fetchArtifactFor(this.runtime, artifact, this.state.nodeToken, signal);
  }

  /** @internal */
  neverReturns(kind: RestartKind): boolean {
    return kind === "upgrade" && this.#behaviour.upgrade === "no-return";
  }

  /**
   * @internal After a restart: an upgrade on trial whose health check fails is reverted
   * ({@link revertFailedTrial}) and saved.
   */
  restarted(kind: RestartKind): void {
    const trial = this.#trial;
    this.#trial = undefined;
    if (kind !== "upgrade" || trial === undefined || !revertFailedTrial(this.state, trial)) return;
    void this.persist();
    this.log.info({ from: trial.to, to: trial.from }, "health check failed (simulated); reverted");
  }

  /**
   * @internal Why a deferring agent cannot take this upgrade now (with the fleet's defer
   * chance per offer), or undefined. Only on a stream that negotiated `defer.v1`: without it
   * Control would take DEFERRED for a refusal, so the agent takes the upgrade as any other.
   */
  async deferral(): Promise<string | undefined> {
    if (!this.#behaviour.defer) return undefined;
    if (!this.capabilities.includes("defer.v1")) return undefined;
    if (this.#deferRng.next() >= this.runtime.settings.deferChance) return undefined;
    return "busy (simulated): a maintenance job holds the update lock";
  }

  /** @internal */
  hello(): AgentMessage {
    const offered = this.offeredCapabilities;
    return helloMessage({
      nodeId: this.nodeId,
      agentVersion: this.state.version,
      platform: this.platform,
      bootId: this.bootId,
      capabilities:
        this.#behaviour.upgrade === "no-upgrade-cap"
          ? offered.filter((c) => c !== "upgrade.v1")
          : [...offered],
      labels: { ...this.labels },
      confirmedSequence: BigInt(this.state.confirmedSequence),
      previousVersion: this.state.previousVersion,
      enrollmentKey: this.state.nodeToken === undefined ? enrollmentKeyOf(this.state) : "",
    });
  }

  /** @internal */
  opened(write: (message: AgentMessage) => void): void {
    this.#write = write;
  }

  /** @internal */
  onWelcome(welcome: Welcome): void {
    const { settings } = this.runtime;
    const heartbeatMs = heartbeatMsOf(welcome, settings.heartbeatScale);
    this.#welcome = {
      sessionId: welcome.sessionId,
      capabilities: welcome.capabilities,
      heartbeatMs,
    };
    this.welcomes++;
    if (welcome.nodeToken !== "" && welcome.nodeToken !== this.state.nodeToken) {
      this.state.nodeToken = welcome.nodeToken;
      delete this.state.enrollmentKey;
      void this.persist();
    }
    const configBroken = this.state.configBroken === true;
    const config = welcome.capabilities.includes("config.v1");
    if (config && !configBroken) this.#write?.(configStatusMessage(true, "configuration applied"));
    this.#timers.arm(
      Date.now(),
      heartbeatMs,
      config && configBroken ? settings.configFailDelayMs : undefined,
      this.#behaviour.flap ? intBetween(this.#rng, ...settings.flapMs) : undefined,
    );
    reportReinstated(this);
    reportPending(this);
    this.runtime.ticker.add(this);
    this.log.debug({ sessionId: welcome.sessionId }, "welcomed");
  }

  /** @internal */
  onOperation(operation: Operation): void {
    this.log.debug({ opId: operation.id, kind: operation.kind.case }, "operation received");
    void deliverOperation(this, operation);
  }

  /** @internal */
  closed(): void {
    this.#write = undefined;
    this.#welcome = undefined;
    this.#timers.clear();
    this.runtime.ticker.remove(this);
  }

  /** @internal Called by the fleet's ticker: due heartbeat, late ConfigStatus, flap. */
  onTick(now: number): void {
    if (this.#welcome === undefined) return;
    const due = this.#timers.due(now);
    if (due.heartbeat && !this.#behaviour.silent) {
      this.#write?.(heartbeatMessage());
      this.heartbeats++;
    }
    if (due.configFailure) {
      this.#write?.(configStatusMessage(false, "configuration does not apply (simulated)"));
    }
    if (due.flap) {
      this.log.debug("flapping: dropping the stream");
      this.disconnect();
    }
  }

  /** @internal */
  send(opId: string, report: ReportedState): void {
    this.#write?.(observedMessage(opId, report));
  }

  /** @internal Saves the durable state (one write at a time; never rejects). */
  persist(): Promise<void> {
    return this.#saves.save();
  }

  /** @internal */
  countApplication(opId: string): void {
    this.#applications.set(opId, (this.#applications.get(opId) ?? 0) + 1);
  }
  /** @internal */
  countDuplicate(): void {
    this.duplicates++;
  }
  /** @internal */
  enqueue(task: () => Promise<void>): Promise<void> {
    const next = this.#operations.then(task);
    this.#operations = next;
    return next;
  }
  /** @internal */
  restart(kind: RestartKind): void {
    this.#lifecycle.restart(kind);
  }

  /** @internal A child logger carrying the node id, made on first use. */
  get log(): Logger {
    this.#log ??= this.runtime.log.child({ nodeId: this.nodeId });
    return this.#log;
  }
}
