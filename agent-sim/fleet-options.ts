/**
 * The options of a simulated fleet, their defaults, and their validation (once, with a
 * message that names the offending option).
 */
import type { Logger } from "pino";
import type { BackoffOptions } from "../agent/core/backoff.js";
import type { StreamTls } from "../agent/core/tls.js";
import { type AgentBehaviour, type BehaviourRates, validateRates } from "./behaviours.js";

/** Everything `startFleet` accepts. Only `server` and `count` are required. */
export interface FleetOptions {
  /** Control's agent endpoint, `HOST:PORT`. */
  server: string;
  /** The join token new agents enroll with; enrolled agents use their node token. */
  joinToken?: string;
  /** How many agents (1 to 100 000). */
  count: number;
  /** Seeds every random choice that must be reproducible (default 1). */
  seed?: number;
  /** Node ids are `<idPrefix>-00001`… (default `sim`). */
  idPrefix?: string;
  /** Platform of every agent (default `linux-amd64`). */
  platform?: string;
  /** Version agents start on when they have no saved state (default `1.0.0`). */
  version?: string;
  /** Labels of every agent. */
  labels?: Readonly<Record<string, string>>;
  /** When > 0, agent i gets label `pool=pool-<(i mod poolCount)+1>` (unless `labels.pool` is set). */
  poolCount?: number;
  /** The first K agents get label `canary=true`. */
  canaryCount?: number;
  /** Offered capabilities (default `upgrade.v1`, `config.v1`, `defer.v1`). */
  capabilities?: readonly string[];
  /** Behaviour fractions, assigned deterministically from `seed`. */
  rates?: BehaviourRates;
  /** Per-agent behaviour overrides by node id, applied after the fractions. */
  behaviours?: Readonly<Record<string, Partial<AgentBehaviour>>>;
  /** Versions every agent fails to apply. */
  failVersions?: readonly string[];
  /** Release pins the agents trust; without pins every upgrade is refused. */
  pins?: readonly string[];
  /** Distinct pinned signatures required (default 1). */
  threshold?: number;
  /** Restart delay range in ms (default [1000, 3000]). */
  restartMs?: readonly [number, number];
  /** Flap period range in ms (default [5000, 30000]). */
  flapMs?: readonly [number, number];
  /** Reconnect backoff (default base 250 ms, cap 30 s, reset after 10 s healthy). */
  backoff?: Partial<BackoffOptions>;
  /** Multiplies the welcomed heartbeat interval (default 1). */
  heartbeatScale?: number;
  /** Delay of the failing ConfigStatus after a config-fail agent comes back (default 500). */
  configFailDelayMs?: number;
  /** Pause between upgrade phases in ms (default 0). */
  stepMs?: number;
  /** The chance, 0–1, that a deferring agent defers a given offer (default 0.5). */
  deferChance?: number;
  /** Download artifacts (default true); false trusts the operation's sha256 and size. */
  download?: boolean;
  /**
   * Share one download per artifact among the fleet's agents (default true). False: each agent
   * fetches and checks the artifact itself, as a fleet of real hosts would (the downloads
   * benchmark: the bytes a server sends then grow with the agents).
   */
  shareDownloads?: boolean;
  /** Abort a download without progress for this long (default 30 000 ms). */
  downloadStallMs?: number;
  /** Origins (scheme://host:port) besides the stream's own that receive node tokens. */
  downloadOrigins?: readonly string[];
  /** Time a download has before its rate is judged (default 30 000 ms). */
  downloadGraceMs?: number;
  /** Slowest average download rate accepted after the grace (default 16 384 bytes/s). */
  downloadMinBytesPerSecond?: number;
  /** Grace for a half-closed stream before it is cancelled (default 1000 ms). */
  closeGraceMs?: number;
  /** Cancel (and retry) a stream not welcomed within this long (default 30 000 ms). */
  welcomeTimeoutMs?: number;
  /** Maximum new connections per second across the fleet (default unlimited). */
  connectRate?: number;
  /** Resolution of the shared heartbeat ticker in ms (default 100). */
  tickMs?: number;
  /** TLS (CA) and mTLS (client certificate and key) of every agent's stream; default clear text. */
  tls?: StreamTls;
  /** Keep each agent's durable state in `<stateDir>/<nodeId>.json`. */
  stateDir?: string;
  /** Aborting stops the fleet. */
  signal?: AbortSignal;
  /** Parent logger (default: silent). */
  logger?: Logger;
}

/** Largest fleet one process is allowed to simulate. */
export const MAX_AGENTS = 100_000;

/** Returns a one-line problem naming the first invalid option, or undefined. */
export function validateFleetOptions(options: FleetOptions): string | undefined {
  if (!/^[^\s:]+:\d+$/.test(options.server) && !/^\[[^\]]+\]:\d+$/.test(options.server)) {
    return `server must be HOST:PORT, got ${JSON.stringify(options.server)}`;
  }
  if (!Number.isInteger(options.count) || options.count < 1 || options.count > MAX_AGENTS) {
    return `count must be an integer from 1 to ${MAX_AGENTS}, got ${options.count}`;
  }
  const ints: [string, number | undefined, number][] = [
    ["seed", options.seed, 0],
    ["poolCount", options.poolCount, 0],
    ["canaryCount", options.canaryCount, 0],
    ["threshold", options.threshold, 1],
    ["configFailDelayMs", options.configFailDelayMs, 0],
    ["stepMs", options.stepMs, 0],
    ["downloadStallMs", options.downloadStallMs, 1],
    ["downloadGraceMs", options.downloadGraceMs, 0],
    ["downloadMinBytesPerSecond", options.downloadMinBytesPerSecond, 1],
    ["closeGraceMs", options.closeGraceMs, 0],
    ["welcomeTimeoutMs", options.welcomeTimeoutMs, 1],
    ["tickMs", options.tickMs, 1],
  ];
  for (const [name, value, min] of ints) {
    if (value !== undefined && (!Number.isInteger(value) || value < min)) {
      return `${name} must be an integer ≥ ${min}, got ${value}`;
    }
  }
  for (const origin of options.downloadOrigins ?? []) {
    if (!/^https?:\/\/[^/?#@]+\/?$/.test(origin)) {
      return `downloadOrigins takes scheme://host[:port] origins, got ${JSON.stringify(origin)}`;
    }
  }
  for (const [name, value] of [
    ["heartbeatScale", options.heartbeatScale],
    ["connectRate", options.connectRate],
  ] as const) {
    if (value !== undefined && !(Number.isFinite(value) && value > 0)) {
      return `${name} must be a number > 0, got ${value}`;
    }
  }
  for (const [name, range] of [
    ["restartMs", options.restartMs],
    ["flapMs", options.flapMs],
  ] as const) {
    if (range === undefined) continue;
    const [min, max] = range;
    if (!Number.isInteger(min) || !Number.isInteger(max) || min < 0 || max < min) {
      return `${name} must be [min, max] integers with 0 ≤ min ≤ max, got [${min}, ${max}]`;
    }
  }
  for (const [name, value] of Object.entries(options.backoff ?? {})) {
    if (!Number.isFinite(value) || value < 0) return `backoff.${name} must be a number ≥ 0`;
  }
  const chance = options.deferChance;
  if (chance !== undefined && !(Number.isFinite(chance) && chance >= 0 && chance <= 1)) {
    return `deferChance must be a number between 0 and 1, got ${chance}`;
  }
  const rates = validateRates(options.rates ?? {});
  if (rates !== undefined) return rates;
  const pins = options.pins?.length ?? 0;
  if (options.threshold !== undefined && pins > 0 && options.threshold > pins) {
    return `threshold ${options.threshold} exceeds the ${pins} pins`;
  }
  return undefined;
}
