/**
 * A fleet of simulated agents in one process: built deterministically from its options,
 * sharing one ticker, one connect limiter, one artifact cache and one release verifier.
 */
import { setMaxListeners } from "node:events";
import pino from "pino";
import { ArtifactCache } from "../agent/core/artifact-cache.js";
import { DEFAULT_BACKOFF } from "../agent/core/backoff.js";
import { DEFAULT_DOWNLOAD_POLICY, trustedOrigins } from "../agent/core/download.js";
import {
  type DurableState,
  fileStateStore,
  memoryStateStore,
  type StateStore,
} from "../agent/core/durable-state.js";
import { recoverInterrupted } from "../agent/core/operations.js";
import { ReleaseVerifier } from "../agent/core/release-check.js";
import { AGENT_CHANNEL_OPTIONS, AgentControlClientImpl } from "../agent/core/session.js";
import { streamCredentials } from "../agent/core/tls.js";
import { sleep } from "../agent/core/waker.js";
import { type AgentSpec, DEFAULT_CAPABILITIES, SimulatedAgent } from "./agent.js";
import { assignBehaviours } from "./behaviours.js";
import { type FleetOptions, validateFleetOptions } from "./fleet-options.js";
import { type FleetStats, fleetStats } from "./fleet-stats.js";
import { deriveSeed } from "./prng.js";
import type { AgentRuntime, AgentSettings } from "./runtime.js";
import { ConnectLimiter, Ticker } from "./ticker.js";

/** A running fleet. */
export interface Fleet {
  /** Every agent, in node-id order. */
  readonly agents: readonly SimulatedAgent[];
  /** The agent with `nodeId`; throws when there is none. */
  agent(nodeId: string): SimulatedAgent;
  /**
   * Resolves once `predicate(fleet)` holds (checked every 20 ms); rejects with an error
   * naming `what` after `timeoutMs` (default 10 s).
   */
  waitUntil(predicate: (fleet: Fleet) => boolean, timeoutMs?: number, what?: string): Promise<void>;
  /** Agents with an open stream. */
  connectedCount(): number;
  /** Agents whose current stream was welcomed. */
  welcomedCount(): number;
  /** Counts over the whole fleet. */
  stats(): FleetStats;
  /** A reconnect storm: drops every stream at once; all reconnect with jittered backoff. */
  dropAllStreams(): void;
  /** Stops every agent, closing streams and channels cleanly. Idempotent. */
  stop(): Promise<void>;
}

/** Error thrown by {@link startFleet} for invalid options. */
export class FleetOptionsError extends Error {
  override readonly name = "FleetOptionsError";
}

/**
 * Builds and starts a fleet. Which agents get which behaviour depends only on `count`,
 * `rates` and `seed`. With `stateDir`, agents resume their saved identity, token,
 * versions, confirmed sequence and handled operations.
 */
export async function startFleet(options: FleetOptions): Promise<Fleet> {
  const problem = validateFleetOptions(options);
  if (problem !== undefined) throw new FleetOptionsError(problem);
  const controller = new AbortController();
  setMaxListeners(0, controller.signal); // every agent listens to the fleet's signal
  const onAbort = () => controller.abort();
  options.signal?.addEventListener("abort", onAbort, { once: true });
  const settings = settingsOf(options);
  const store =
    options.stateDir === undefined
      ? memoryStateStore
      : fileStateStore(options.stateDir, { fsync: false });
  const runtime: AgentRuntime = {
    server: options.server,
    joinToken: options.joinToken,
    clientConstructor: AgentControlClientImpl,
    channelOptions: AGENT_CHANNEL_OPTIONS,
    credentials: streamCredentials(options.tls, options.server),
    settings,
    ticker: new Ticker(options.tickMs ?? 100),
    limiter: options.connectRate ? new ConnectLimiter(options.connectRate) : undefined,
    artifacts: new ArtifactCache(settings.downloadPolicy, controller.signal),
    verifier: new ReleaseVerifier(),
    store,
    log: options.logger ?? pino({ level: "silent" }),
  };
  const specs = await agentSpecs(options, store);
  const agents = specs.map((spec) => new SimulatedAgent(spec, runtime));
  const byId = new Map(agents.map((a) => [a.nodeId, a]));
  let stopping: Promise<void> | undefined;
  const fleet: Fleet = {
    agents,
    agent(nodeId) {
      const found = byId.get(nodeId);
      if (found === undefined) throw new Error(`no simulated agent ${nodeId}`);
      return found;
    },
    async waitUntil(predicate, timeoutMs = 10_000, what = "fleet condition") {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(fleet)) {
        if (Date.now() >= deadline)
          throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
        await sleep(20);
      }
    },
    connectedCount: () => agents.reduce((n, a) => n + (a.connected ? 1 : 0), 0),
    welcomedCount: () => agents.reduce((n, a) => n + (a.welcomed ? 1 : 0), 0),
    stats: () => fleetStats(agents, runtime.artifacts.downloads),
    dropAllStreams() {
      for (const agent of agents) agent.disconnect();
    },
    stop() {
      stopping ??= (async () => {
        options.signal?.removeEventListener("abort", onAbort);
        controller.abort();
        await Promise.all(agents.map((a) => a.stop()));
        runtime.ticker.stop();
      })();
      return stopping;
    },
  };
  for (const agent of agents) agent.start(controller.signal);
  if (options.signal?.aborted) await fleet.stop();
  return fleet;
}

function settingsOf(options: FleetOptions): AgentSettings {
  return {
    pins: [...(options.pins ?? [])],
    threshold: options.threshold ?? 1,
    failVersions: new Set(options.failVersions ?? []),
    restartMs: options.restartMs ?? [1000, 3000],
    flapMs: options.flapMs ?? [5000, 30_000],
    backoff: { ...DEFAULT_BACKOFF, ...options.backoff },
    heartbeatScale: options.heartbeatScale ?? 1,
    configFailDelayMs: options.configFailDelayMs ?? 500,
    stepMs: options.stepMs ?? 0,
    deferChance: options.deferChance ?? 0.5,
    download: options.download ?? true,
    shareDownloads: options.shareDownloads ?? true,
    trustedOrigins: trustedOrigins(
      options.server,
      options.tls !== undefined,
      options.downloadOrigins ?? [],
    ),
    downloadPolicy: {
      stallMs: options.downloadStallMs ?? DEFAULT_DOWNLOAD_POLICY.stallMs,
      graceMs: options.downloadGraceMs ?? DEFAULT_DOWNLOAD_POLICY.graceMs,
      minBytesPerSecond:
        options.downloadMinBytesPerSecond ?? DEFAULT_DOWNLOAD_POLICY.minBytesPerSecond,
    },
    closeGraceMs: options.closeGraceMs ?? 1000,
    welcomeTimeoutMs: options.welcomeTimeoutMs ?? 30_000,
  };
}

/** The node id of agent `index` (0-based): `<prefix>-00001`… */
export function nodeIdOf(prefix: string, index: number): string {
  return `${prefix}-${String(index + 1).padStart(5, "0")}`;
}

async function agentSpecs(options: FleetOptions, store: StateStore): Promise<AgentSpec[]> {
  const seed = options.seed ?? 1;
  const behaviours = assignBehaviours(options.count, options.rates ?? {}, seed);
  const specs: AgentSpec[] = [];
  for (let start = 0; start < options.count; start += 256) {
    const end = Math.min(options.count, start + 256);
    const indexes = Array.from({ length: end - start }, (_, k) => start + k);
    const chunk = await Promise.all(
      indexes.map(async (i): Promise<AgentSpec> => {
        const nodeId = nodeIdOf(options.idPrefix ?? "sim", i);
        const labels: Record<string, string> = { ...options.labels };
        if ((options.poolCount ?? 0) > 0 && labels.pool === undefined) {
          labels.pool = `pool-${(i % (options.poolCount ?? 1)) + 1}`;
        }
        if (i < (options.canaryCount ?? 0)) labels.canary = "true";
        const saved = await store.load(nodeId);
        if (saved !== undefined) recoverInterrupted(saved);
        return {
          nodeId,
          platform: options.platform ?? "linux-amd64",
          labels,
          capabilities: options.capabilities ?? DEFAULT_CAPABILITIES,
          behaviour: { ...behaviours[i]!, ...options.behaviours?.[nodeId] },
          seed: deriveSeed(seed, 1000 + i),
          state: saved ?? freshState(nodeId, options.version ?? "1.0.0"),
        };
      }),
    );
    specs.push(...chunk);
  }
  return specs;
}

function freshState(nodeId: string, version: string): DurableState {
  return { nodeId, version, previousVersion: "", confirmedSequence: "0", handled: {} };
}
