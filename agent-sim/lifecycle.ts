/**
 * An agent's process lifecycle: connect, and after every stream end reconnect with
 * jittered exponential backoff (reset once a stream stayed healthy); restart with a new
 * boot id after an upgrade or rollback; stay away while offline; stop cleanly.
 */
import { randomUUID } from "node:crypto";
import { status as GrpcStatus } from "@grpc/grpc-js";
import type { Logger } from "pino";
import { backoffDelay } from "../agent/core/backoff.js";
import type { DurableState } from "../agent/core/durable-state.js";
import type { RestartKind } from "../agent/core/operations.js";
import { runSession, type SessionEnd, type SessionHost } from "../agent/core/session.js";
import { sleep, Waker } from "../agent/core/waker.js";
import { intBetween, type Prng } from "./prng.js";
import type { AgentRuntime } from "./runtime.js";

/** What the lifecycle needs from its agent. */
export interface LifecycleHost extends SessionHost {
  readonly state: DurableState;
  readonly log: Logger;
  /** True when a restart after an upgrade must never come back (the no-return behaviour). */
  neverReturns(kind: RestartKind): boolean;
  /** Called as the simulated process starts again after a restart of `kind` (before Hello). */
  restarted(kind: RestartKind): void;
  persist(): Promise<void>;
}

/** Runs one agent's connect/backoff/restart loop. */
export class AgentLifecycle {
  /** Streams opened since start. */
  connects = 0;
  /** The gRPC status code of the last stream end, if any. */
  lastStatus: GrpcStatus | undefined;
  #bootId = randomUUID();
  #online: boolean;
  #restart: RestartKind | undefined;
  #restarting = false;
  #session: AbortController | undefined;
  readonly #waker = new Waker();
  readonly #stop = new AbortController();
  #done: Promise<void> = Promise.resolve();

  constructor(
    private readonly host: LifecycleHost,
    private readonly runtime: AgentRuntime,
    private readonly rng: Prng,
    online: boolean,
  ) {
    this.#online = online;
  }

  /** Changes at every simulated start and restart. */
  get bootId(): string {
    return this.#bootId;
  }
  /** Meant to be connected: not offline, not stopped. */
  get online(): boolean {
    return this.#online && !this.#stop.signal.aborted;
  }
  /** Between RESTARTING and the next start. */
  get restarting(): boolean {
    return this.#restarting;
  }
  /** Aborted when the agent stops for good. */
  get signal(): AbortSignal {
    return this.#stop.signal;
  }

  /** Starts the loop; aborting `signal` stops it like {@link stop}. */
  start(signal: AbortSignal): void {
    if (signal.aborted) this.#stop.abort();
    else signal.addEventListener("abort", () => void this.stop(), { once: true });
    this.#done = this.#run(this.#stop.signal).catch((error: unknown) => {
      this.host.log.error({ err: error }, "agent loop crashed");
    });
  }

  /** Drops the current stream at once (a network failure); the loop reconnects with backoff. */
  disconnect(): void {
    this.#session?.abort("cancel");
  }

  /** Connects again if offline or never returned from a restart. */
  goOnline(): void {
    this.#online = true;
    this.#waker.wake();
  }

  /** Drops the stream and stays away until {@link goOnline}. */
  goOffline(): void {
    this.#online = false;
    this.#session?.abort("cancel");
    this.#waker.wake();
  }

  /** Ends the stream gracefully (so RESTARTING reaches Control) and restarts. */
  restart(kind: RestartKind): void {
    this.#restart = kind;
    this.#restarting = true;
    this.#session?.abort("end");
    this.#waker.wake();
  }

  /** Closes the stream and channel cleanly; resolves when the loop has ended. */
  async stop(): Promise<void> {
    this.#stop.abort();
    this.#session?.abort("end");
    this.#waker.wake();
    await this.#done;
  }

  async #run(signal: AbortSignal): Promise<void> {
    const { backoff } = this.runtime.settings;
    let attempt = 0;
    while (!signal.aborted) {
      if (this.#restart !== undefined) {
        await this.#restartNow(this.#restart, signal);
        attempt = 0;
        continue;
      }
      if (!this.#online) {
        await this.#waker.sleep(Number.POSITIVE_INFINITY, signal);
        continue;
      }
      const wait = this.runtime.limiter?.reserve() ?? 0;
      if (wait > 0) await sleep(wait, signal);
      if (signal.aborted) break;
      const end = await this.#connectOnce(signal);
      if (signal.aborted || this.#restart !== undefined || !this.#online) continue;
      if (end.openMs >= backoff.resetAfterMs) attempt = 0;
      this.#afterStreamEnd(end);
      await this.#waker.sleep(backoffDelay(attempt++, backoff), signal);
    }
  }

  async #restartNow(kind: RestartKind, signal: AbortSignal): Promise<void> {
    this.#restart = undefined;
    this.#restarting = true;
    if (this.host.neverReturns(kind)) {
      this.#online = false;
      this.host.log.info("restarted and not coming back (simulated no-return)");
    } else {
      const [min, max] = this.runtime.settings.restartMs;
      await sleep(intBetween(this.rng, min, max), signal);
    }
    this.host.restarted(kind);
    this.#bootId = randomUUID();
    this.#restarting = false;
  }

  async #connectOnce(signal: AbortSignal): Promise<SessionEnd> {
    const session = new AbortController();
    this.#session = session;
    const onStop = () => session.abort("end");
    signal.addEventListener("abort", onStop, { once: true });
    this.connects++;
    try {
      const end = await runSession(this.host, {
        server: this.runtime.server,
        token: this.host.state.nodeToken ?? this.runtime.joinToken ?? "",
        usedNodeToken: this.host.state.nodeToken !== undefined,
        clientConstructor: this.runtime.clientConstructor,
        channelOptions: this.runtime.channelOptions,
        credentials: this.runtime.credentials,
        graceMs: this.runtime.settings.closeGraceMs,
        welcomeTimeoutMs: this.runtime.settings.welcomeTimeoutMs,
        signal: session.signal,
      });
      this.lastStatus = end.code;
      return end;
    } finally {
      signal.removeEventListener("abort", onStop);
      this.#session = undefined;
    }
  }

  #afterStreamEnd(end: SessionEnd): void {
    const log = this.host.log;
    log.debug({ code: end.code, details: end.details, openMs: end.openMs }, "stream ended");
    if (end.code === GrpcStatus.UNAUTHENTICATED && end.usedNodeToken && this.runtime.joinToken) {
      log.warn(
        { details: end.details },
        "node token rejected; enrolling again with the join token",
      );
      delete this.host.state.nodeToken;
      void this.host.persist();
    }
  }
}
