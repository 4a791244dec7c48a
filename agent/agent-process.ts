/**
 * The running Agent (the supervisor's child): one stream to Control at a time, reconnected
 * with jittered backoff; Hello from its durable state and the version it was built as;
 * heartbeats at the welcomed interval; operations through the protocol core and the real
 * applier. It returns when an operation asks for a restart (the supervisor then starts what
 * `current` points at) or when it is stopped.
 */
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import * as grpc from "@grpc/grpc-js";
import {
  type AgentMessage,
  type Operation,
  OperationPhase,
  type Welcome,
} from "../proto/gen/agentcontrol/v1/agent_control_pb.js";
import { type AgentState, saveState } from "./agent-state.js";
import { type BackoffOptions, backoffDelay, DEFAULT_BACKOFF } from "./core/backoff.js";
import type {
  ArtifactOrigins,
  DownloadPolicy,
  DownloadResult,
  DownloadTls,
} from "./core/download.js";
import { enrollmentKeyOf, type ReportedState, reportOf } from "./core/durable-state.js";
import type { AgentLog } from "./core/log.js";
import {
  CAP_TRUST,
  heartbeatMessage,
  heartbeatMsOf,
  helloMessage,
  observedMessage,
} from "./core/messages.js";
import { downloadAsNode } from "./core/node-download.js";
import {
  type Applier,
  type ArtifactRequest,
  MAX_OPERATION_ID_CHARS,
  type OperationHost,
  type RestartKind,
  recoverInterrupted,
  reportReinstated,
} from "./core/operations.js";
import { ReleaseVerifier } from "./core/release-check.js";
import {
  AGENT_CHANNEL_OPTIONS,
  AgentControlClientImpl,
  runSession,
  type SessionHost,
} from "./core/session.js";
import { DEFAULT_TUF_REFRESH_MS, runTrustRefresh } from "./core/trust-refresh.js";
import type { TrustState } from "./core/trust-state.js";
import type { TufCheck } from "./core/tuf-check.js";
import { sleep, Waker } from "./core/waker.js";
import { nodeTokenRefusal, welcomedNodeToken } from "./core/welcome.js";
import { type DeferralOptions, deferralReason } from "./deferral.js";
import type { InstallPaths } from "./install-dir.js";
import { OperationBudget, type OperationLimits, receiveOperation } from "./operation-queue.js";
import { realApplier } from "./real-applier.js";
import { TrustReport } from "./trust-report.js";

/**
 * The capabilities the real Agent offers (and `trust.v1` when it has a TUF channel); `defer.v1`:
 * it may answer an upgrade DEFERRED (`--defer-lock`, `--defer-command`), which Control honours
 * only on a session that negotiated it.
 */
export const AGENT_CAPABILITIES: readonly string[] = Object.freeze(["upgrade.v1", "defer.v1"]);

/** The capability a session must have negotiated for the Agent to answer DEFERRED. */
const CAP_DEFER = "defer.v1";

/** Everything one run of the Agent needs. */
export interface AgentProcessOptions {
  readonly paths: InstallPaths;
  /** The loaded durable state (the Agent writes it from now on). */
  readonly state: AgentState;
  /** The version this code was built as (sent in Hello). */
  readonly version: string;
  readonly server: string;
  readonly joinToken: string | undefined;
  readonly pins: readonly string[];
  readonly threshold: number;
  readonly platform: string;
  readonly labels: Readonly<Record<string, string>>;
  /** Channel credentials (TLS, mTLS); undefined: clear text. */
  readonly credentials: grpc.ChannelCredentials | undefined;
  /**
   * The credentials carry a client certificate (`--cert`, `--key`): a Welcome without a node
   * token, while the node holds none, is its enrollment by certificate.
   */
  readonly clientCertificate?: boolean;
  /** The TUF check of releases, when the channel is a TUF repository. */
  readonly tuf: TufCheck | undefined;
  /** How often the TUF metadata is refreshed without an upgrade (default 1 h). */
  readonly tufRefreshMs?: number;
  /** The only origins the node token (and client certificate) is sent to (see `trustedOrigins`). */
  readonly trustedOrigins: readonly string[];
  /**
   * The stream's TLS for downloads: its CA verifies every https download, and its client
   * certificate and key go with those to a trusted origin (see `downloadTls`).
   */
  readonly downloadTls?: DownloadTls | undefined;
  /** The only origins artifacts are fetched from (see `artifactOrigins`); others are refused. */
  readonly artifactOrigins: ArtifactOrigins;
  /** Stall timeout, deadline and minimum rate of downloads. */
  readonly downloadPolicy: DownloadPolicy;
  readonly log: AgentLog;
  /** Called at every Welcome (the supervisor learns the version started well). */
  readonly onWelcomed?: (sessionId: string) => void;
  readonly backoff?: BackoffOptions;
  /** What the Agent holds from Control (default: `DEFAULT_OPERATION_LIMITS`). */
  readonly operationLimits?: OperationLimits;
  /** What makes the node answer upgrades DEFERRED (absent: never). */
  readonly deferral?: DeferralOptions;
  readonly signal: AbortSignal;
}

/** How a run ended. */
export type AgentExit = "restart" | "stopped";

/** Runs the Agent until it must restart or `signal` aborts. */
export async function runAgent(options: AgentProcessOptions): Promise<AgentExit> {
  const agent = new RealAgent(options);
  return agent.run();
}

class RealAgent implements OperationHost, SessionHost {
  readonly platform: string;
  readonly state: AgentState;
  readonly log: AgentLog;
  readonly trust: OperationHost["trust"];
  readonly stepMs = 0;
  readonly applier: Applier;
  busy = false;
  #restart: RestartKind | undefined;
  #write: ((message: AgentMessage) => void) | undefined;
  #heartbeat: NodeJS.Timeout | undefined;
  #session: AbortController | undefined;
  #saving: Promise<void> = Promise.resolve();
  #operations: Promise<void> = Promise.resolve();
  /** Whether the current session was opened with the join token (it may hand a node token). */
  #enrolling = false;
  /** Whether the current session's Welcome included `defer.v1`. */
  #deferNegotiated = false;
  readonly #trustReport: TrustReport;
  readonly #budget: OperationBudget;
  readonly #bootId = randomUUID();
  readonly #waker = new Waker();
  readonly #stop = new AbortController();

  constructor(private readonly options: AgentProcessOptions) {
    this.platform = options.platform;
    this.state = options.state;
    this.log = options.log;
    this.#trustReport = new TrustReport(options.log);
    this.#budget = new OperationBudget({
      log: options.log,
      ...(options.operationLimits === undefined ? {} : { limits: options.operationLimits }),
    });
    this.trust = {
      verifier: new ReleaseVerifier(),
      pins: options.pins,
      threshold: options.threshold,
      tuf: options.tuf,
    };
    this.applier = realApplier({
      paths: options.paths,
      state: options.state,
      log: options.log,
      // The applier learns when its save failed: a switch it cannot record is not made.
      persist: () => this.#save(),
    });
    recoverInterrupted(this.state);
    if (options.signal.aborted) this.#stop.abort();
    else options.signal.addEventListener("abort", () => this.#stopNow(), { once: true });
  }

  get signal(): AbortSignal {
    return this.#stop.signal;
  }
  get restarting(): boolean {
    return this.#restart !== undefined;
  }

  async run(): Promise<AgentExit> {
    const backoff = this.options.backoff ?? DEFAULT_BACKOFF;
    let attempt = 0;
    await this.persist();
    const tuf = this.options.tuf;
    const refreshStop = new AbortController();
    const refreshing =
      tuf === undefined
        ? Promise.resolve()
        : runTrustRefresh({
            tuf,
            holder: this,
            intervalMs: this.options.tufRefreshMs ?? DEFAULT_TUF_REFRESH_MS,
            persist: () => this.persist(),
            now: () => new Date(),
            sleep,
            signal: AbortSignal.any([this.#stop.signal, refreshStop.signal]),
          }).catch((error: unknown) => {
            this.log.error({ err: String(error) }, "the TUF refresh stopped");
          });
    while (!this.#stop.signal.aborted && this.#restart === undefined) {
      if (this.state.nodeToken === undefined && this.state.enrollmentKey === undefined) {
        enrollmentKeyOf(this.state);
        await this.persist();
      }
      if (this.state.nodeToken !== undefined) {
        // A token saved before Welcomes were checked: one that cannot be sent is dropped.
        const refusal = nodeTokenRefusal(this.state.nodeToken);
        if (refusal !== undefined) {
          this.log.warn({ reason: refusal }, "dropping the saved node token; enrolling again");
          delete this.state.nodeToken;
          await this.persist();
        }
      }
      const session = new AbortController();
      this.#session = session;
      this.#enrolling = this.state.nodeToken === undefined;
      const end = await runSession(this, {
        server: this.options.server,
        token: this.state.nodeToken ?? this.options.joinToken ?? "",
        usedNodeToken: this.state.nodeToken !== undefined,
        clientConstructor: AgentControlClientImpl,
        channelOptions: AGENT_CHANNEL_OPTIONS,
        ...(this.options.credentials !== undefined
          ? { credentials: this.options.credentials }
          : {}),
        graceMs: 2_000,
        welcomeTimeoutMs: 30_000,
        signal: session.signal,
      });
      this.#session = undefined;
      if (this.#restart !== undefined || this.#stop.signal.aborted) break;
      this.log.warn({ code: end.code, details: end.details }, "stream ended");
      if (
        end.code === grpc.status.UNAUTHENTICATED &&
        end.usedNodeToken &&
        this.options.joinToken !== undefined
      ) {
        this.log.warn({}, "node token rejected; enrolling again with the join token");
        delete this.state.nodeToken;
        await this.persist();
      }
      if (end.openMs >= backoff.resetAfterMs) attempt = 0;
      await this.#waker.sleep(backoffDelay(attempt++, backoff), this.#stop.signal);
    }
    // A refresh in flight is not waited for (a fetch may take its timeout): once stopped, the
    // loop records nothing more.
    refreshStop.abort();
    void refreshing;
    await this.#operations.catch(() => {});
    await this.#saving;
    return this.#restart !== undefined ? "restart" : "stopped";
  }

  hello(): AgentMessage {
    return helloMessage({
      nodeId: this.state.nodeId,
      agentVersion: this.options.version,
      platform: this.platform,
      bootId: this.#bootId,
      capabilities: [...AGENT_CAPABILITIES, ...(this.options.tuf !== undefined ? [CAP_TRUST] : [])],
      labels: { ...this.options.labels },
      confirmedSequence: BigInt(this.state.confirmedSequence),
      previousVersion: this.state.previousVersion,
      enrollmentKey: this.state.nodeToken === undefined ? enrollmentKeyOf(this.state) : "",
    });
  }

  opened(write: (message: AgentMessage) => void): void {
    this.#write = write;
  }

  onWelcome(welcome: Welcome): void {
    this.log.info({ sessionId: welcome.sessionId, version: this.options.version }, "welcomed");
    let dirty = false;
    const token = welcomedNodeToken(welcome.nodeToken, {
      enrolling: this.#enrolling,
      current: this.state.nodeToken,
    });
    if (token.kind === "refused") {
      this.log.warn({ reason: token.reason }, "refusing the Welcome's node token");
    } else if (token.kind === "take") {
      this.state.nodeToken = token.token;
      delete this.state.enrollmentKey;
      dirty = true;
    }
    if (
      this.options.clientCertificate === true &&
      this.state.nodeToken === undefined &&
      this.state.certificateEnrolled !== true
    ) {
      this.state.certificateEnrolled = true;
      dirty = true;
    }
    const pending = this.state.switch;
    if (pending !== undefined && pending.to === this.options.version) {
      delete this.state.switch;
      dirty = true;
    }
    const failed = this.state.pendingReport;
    if (failed !== undefined) {
      delete this.state.pendingReport;
      dirty = true;
      const report = reportOf(this.state, failed);
      if (report !== undefined) this.send(failed, report);
    }
    if (dirty) void this.persist();
    reportReinstated(this);
    this.#deferNegotiated = welcome.capabilities.includes(CAP_DEFER);
    this.#trustReport.welcomed(welcome.capabilities, this.#write, this.state.trust);
    const heartbeatMs = heartbeatMsOf(welcome, 1);
    clearInterval(this.#heartbeat);
    this.#heartbeat = setInterval(() => this.#write?.(heartbeatMessage()), heartbeatMs);
    this.options.onWelcomed?.(welcome.sessionId);
  }

  onOperation(operation: Operation): void {
    // An id too long to take is refused (one line) where it is delivered.
    if (operation.id.length <= MAX_OPERATION_ID_CHARS) {
      this.log.info({ opId: operation.id, kind: operation.kind.case }, "operation received");
    }
    void receiveOperation(this, this.#budget, operation);
  }

  closed(): void {
    this.#write = undefined;
    this.#trustReport.closed();
    clearInterval(this.#heartbeat);
    this.#heartbeat = undefined;
  }

  fetch(artifact: ArtifactRequest, signal: AbortSignal): Promise<DownloadResult> {
    return downloadAsNode(
      artifact,
      {
        trustedOrigins: this.options.trustedOrigins,
        artifactOrigins: this.options.artifactOrigins,
        policy: this.options.downloadPolicy,
        nodeToken: this.state.nodeToken,
        tls: this.options.downloadTls,
        // Kept bytes of a cut download, resumed after a cut or a restart.
        partialDir: join(this.options.paths.root, "downloads"),
      },
      signal,
    );
  }

  send(opId: string, report: ReportedState): void {
    this.log.info({ opId, phase: OperationPhase[report.phase], code: report.code }, "report");
    this.#write?.(observedMessage(opId, report));
  }

  /** Saves the state, one write at a time; a failure is logged (the next save retries). */
  persist(): Promise<void> {
    return this.#save().catch(() => {});
  }

  /** Saves the state, one write at a time; rejects (and logs) when this save failed. */
  #save(): Promise<void> {
    const next = this.#saving.then(() =>
      saveState(this.options.paths, this.state).catch((error: unknown) => {
        this.log.error({ err: String(error) }, "could not save the agent state");
        throw error;
      }),
    );
    this.#saving = next.catch(() => {});
    return next;
  }

  /** Logs the change once and tells Control on the open stream (or after the next Welcome). */
  trustChanged(state: TrustState): void {
    this.#trustReport.changed(state);
  }

  countApplication(): void {}
  countDuplicate(): void {}

  restart(kind: RestartKind): void {
    this.log.info({ kind, version: this.state.version }, "restarting into the new version");
    this.#restart = kind;
    this.#session?.abort("end");
    this.#waker.wake();
  }

  deferNegotiated(): boolean {
    return this.#deferNegotiated;
  }

  deferral(): Promise<string | undefined> {
    const options = this.options.deferral;
    return options === undefined ? Promise.resolve(undefined) : deferralReason(options);
  }

  enqueue(task: () => Promise<void>): Promise<void> {
    const next = this.#operations.then(task);
    this.#operations = next;
    return next;
  }

  #stopNow(): void {
    this.#stop.abort();
    this.#session?.abort("end");
    this.#waker.wake();
  }
}
