/**
 * The hub of live agent streams: at most one session per node (the newest wins), the
 * node's liveness in memory, and the batched writes that keep the registry in step.
 *
 * Liveness costs no database write per heartbeat: a heartbeat only stamps the session in
 * memory; every `flushIntervalMs` the nodes whose stored `last_seen` is older than
 * `sightingWriteIntervalMs` are written in one `unnest` statement, and stream ends are
 * written (also batched, with the exact last-seen time) within `endFlushDelayMs`. Readers
 * of a live node's last-seen time ask the hub ({@link AgentHub.lastSeenMs}), so the stored
 * value of a live node only needs to be fresh enough for after a crash.
 */
import type { Clock } from "../clock.js";
import { type ClockTimer, scheduleEvery, scheduleOnce } from "../clock-timer.js";
import type { NodeStore, Sighting, StreamEnd } from "../db/node-store.js";
import type { Logger } from "../log.js";
import type { AgentEvent, AgentEventListener, AgentGateway, ConnectedNode } from "./events.js";
import type { EncodedOperation } from "./operation-frame.js";

/** What the hub needs of a session. */
export interface HubSession {
  readonly node: ConnectedNode;
  /** Milliseconds (clock time) of the last message from the Agent. */
  lastSeenMs: number;
  /** The `lastSeenMs` last written to the database (the hub maintains it). */
  lastSeenWrittenMs: number;
  /** Queues an operation; false when the stream is closed or its queue is full. */
  send(operation: EncodedOperation): boolean;
  /** Ends the stream with a gRPC status; idempotent. */
  close(code: number, message: string): void;
}

/** The liveness writes the hub makes (a {@link NodeStore} in production). */
export type LivenessStore = Pick<NodeStore, "flushSightings" | "flushStreamEnds">;

/** Options of {@link AgentHub}. */
export interface AgentHubOptions {
  /** Every timer of the hub (offline sweep, flushes) runs on this clock's time. */
  readonly clock: Clock;
  readonly store: LivenessStore;
  readonly log: Logger;
  /** A node silent this long is offline and its stream is closed. */
  readonly offlineAfterMs: number;
  /** How often `last_seen` is flushed (default 5 s). */
  readonly flushIntervalMs?: number;
  /** How soon ended streams are written (default 100 ms). */
  readonly endFlushDelayMs?: number;
  /**
   * A live node's `last_seen` is written again once it is this much older than the time
   * heard (default: 60 s, at most half of `offlineAfterMs`). With 10 s heartbeats that is
   * one row write per node per minute instead of one per heartbeat.
   */
  readonly sightingWriteIntervalMs?: number;
  /** Told of every operation queued on a stream (for `/metrics`). */
  readonly sent?: (operation: EncodedOperation) => void;
}

/** Live sessions, liveness, and the gateway operations go through. */
export class AgentHub implements AgentGateway {
  private readonly sessions = new Map<string, HubSession>();
  private readonly listeners = new Set<AgentEventListener>();
  private readonly heard = new Set<string>();
  private readonly ended: StreamEnd[] = [];
  private endTimer: ClockTimer | undefined;
  private readonly ticker: ClockTimer;
  private flushing: Promise<void> = Promise.resolve();
  private lastFlushMs: number;
  private stopped = false;
  private readonly sightingWriteMs: number;

  constructor(private readonly options: AgentHubOptions) {
    this.lastFlushMs = options.clock.now().getTime();
    this.sightingWriteMs =
      options.sightingWriteIntervalMs ?? Math.min(60_000, options.offlineAfterMs / 2);
    const sweepMs = Math.max(50, Math.min(1000, options.offlineAfterMs / 4));
    this.ticker = scheduleEvery(options.clock, sweepMs, () => this.tick(), this.onTimerError);
  }

  /** Number of live sessions. */
  get size(): number {
    return this.sessions.size;
  }

  /** Node ids with a live session. */
  nodeIds(): string[] {
    return [...this.sessions.keys()];
  }

  /** The session on record of each node with a live session here (its holder is this Control). */
  heldStreams(): { nodeId: string; sessionId: string }[] {
    return [...this.sessions.values()].map((s) => ({
      nodeId: s.node.nodeId,
      sessionId: s.node.sessionId,
    }));
  }

  /** Registers a session after its Welcome; a previous session of the node is closed. */
  register(session: HubSession): void {
    // The Hello's row write stored this connect time as `last_seen`.
    session.lastSeenWrittenMs = session.lastSeenMs;
    const previous = this.sessions.get(session.node.nodeId);
    this.sessions.set(session.node.nodeId, session);
    if (previous) previous.close(10 /* ABORTED */, "replaced by a newer stream of the same node");
    this.emit({ kind: "connected", node: session.node });
  }

  /**
   * Closes the live stream of `nodeId` held here, if any, with PERMISSION_DENIED and
   * `message` (an administrator revoked or reset the node); idempotent.
   */
  cutOff(nodeId: string, message: string): void {
    this.sessions.get(nodeId)?.close(7 /* PERMISSION_DENIED */, message);
  }

  /** Removes a session when its stream ended; stale sessions (already replaced) are ignored. */
  unregister(session: HubSession, reason: string): void {
    const { nodeId, sessionId } = session.node;
    if (this.sessions.get(nodeId) !== session) return;
    this.sessions.delete(nodeId);
    this.heard.delete(nodeId);
    this.ended.push({ nodeId, sessionId, lastSeen: new Date(session.lastSeenMs) });
    this.endTimer ??= scheduleOnce(
      this.options.clock,
      this.options.endFlushDelayMs ?? 100,
      () => {
        this.endTimer = undefined;
        this.queueFlush();
      },
      this.onTimerError,
    );
    this.emit({ kind: "disconnected", nodeId, sessionId, reason });
  }

  /** Stamps a node as heard from at `nowMs` (default: the clock's now). */
  touch(session: HubSession, nowMs: number = this.options.clock.now().getTime()): void {
    session.lastSeenMs = nowMs;
    if (nowMs - session.lastSeenWrittenMs >= this.sightingWriteMs) {
      this.heard.add(session.node.nodeId);
    }
  }

  /** Delivers an event to every listener; a throwing listener is logged, never propagated. */
  emit(event: AgentEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (error) {
        this.options.log.error({ err: error, event: event.kind }, "agent event listener failed");
      }
    }
  }

  send(nodeId: string, operation: EncodedOperation): boolean {
    const queued = this.sessions.get(nodeId)?.send(operation) ?? false;
    if (queued) this.options.sent?.(operation);
    return queued;
  }

  connected(nodeId: string): ConnectedNode | undefined {
    return this.sessions.get(nodeId)?.node;
  }

  /** Last time (ms) the node was heard from on its live stream. */
  lastSeenMs(nodeId: string): number | undefined {
    return this.sessions.get(nodeId)?.lastSeenMs;
  }

  subscribe(listener: AgentEventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Closes every session with `code`; used when Control shuts down. */
  closeAll(code: number, message: string): void {
    for (const session of [...this.sessions.values()]) session.close(code, message);
  }

  /** Stops timers and writes what is pending. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.ticker.cancel();
    this.endTimer?.cancel();
    this.endTimer = undefined;
    this.queueFlush();
    await this.flushing;
  }

  /** Writes pending sightings and stream ends now; resolves when written. */
  async flush(): Promise<void> {
    this.queueFlush();
    await this.flushing;
  }

  private readonly onTimerError = (error: unknown): void => {
    this.options.log.error({ err: error }, "agent hub timer failed");
  };

  private tick(): void {
    const nowMs = this.options.clock.now().getTime();
    for (const session of this.sessions.values()) {
      if (nowMs - session.lastSeenMs > this.options.offlineAfterMs) {
        const seconds = Math.round(this.options.offlineAfterMs / 1000);
        session.close(
          4 /* DEADLINE_EXCEEDED */,
          `no heartbeat for ${seconds} s: node marked offline`,
        );
      }
    }
    if (!this.stopped && nowMs - this.lastFlushMs >= (this.options.flushIntervalMs ?? 5000)) {
      this.queueFlush();
    }
  }

  private queueFlush(): void {
    this.lastFlushMs = this.options.clock.now().getTime();
    const sightings: Sighting[] = [];
    for (const nodeId of this.heard) {
      const session = this.sessions.get(nodeId);
      if (session === undefined) continue;
      sightings.push({ nodeId, lastSeen: new Date(session.lastSeenMs) });
      session.lastSeenWrittenMs = session.lastSeenMs;
    }
    this.heard.clear();
    const ends = this.ended.splice(0);
    if (sightings.length === 0 && ends.length === 0) return;
    this.flushing = this.flushing
      .then(async () => {
        await this.options.store.flushStreamEnds(ends);
        await this.options.store.flushSightings(sightings);
      })
      .catch((error: unknown) => {
        // The next heartbeat of these nodes queues them again (fresher values); stream
        // ends are retried once.
        for (const { nodeId } of sightings) {
          const session = this.sessions.get(nodeId);
          if (session) session.lastSeenWrittenMs = 0;
        }
        this.ended.push(...ends);
        this.options.log.warn({ err: (error as Error).message }, "liveness flush failed");
      });
  }
}
