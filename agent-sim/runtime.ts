/**
 * What every agent of a fleet shares: the server address and tokens, the settings that
 * shape behaviour and timing, and the fleet-wide machinery (ticker, connect limiter,
 * artifact cache, release verifier, state store, logger).
 */
import type * as grpc from "@grpc/grpc-js";
import type { Logger } from "pino";
import type { ArtifactCache } from "../agent/core/artifact-cache.js";
import type { BackoffOptions } from "../agent/core/backoff.js";
import type { DownloadPolicy } from "../agent/core/download.js";
import type { StateStore } from "../agent/core/durable-state.js";
import type { ReleaseVerifier } from "../agent/core/release-check.js";
import type { AgentControlClientConstructor } from "../agent/core/session.js";
import type { ConnectLimiter, Ticker } from "./ticker.js";

/** Timing and trust settings shared by the agents of a fleet. */
export interface AgentSettings {
  /** Release pins the agents trust (`--pins`); none means every upgrade is refused. */
  readonly pins: readonly string[];
  /** Distinct pinned signatures required (default 1). */
  readonly threshold: number;
  /** Versions every agent fails to apply (`--fail-versions`). */
  readonly failVersions: ReadonlySet<string>;
  /** Restart delay range in ms, drawn per restart from the agent's seeded PRNG. */
  readonly restartMs: readonly [number, number];
  /** Period range in ms after which a flapping agent drops its stream. */
  readonly flapMs: readonly [number, number];
  /** Reconnect backoff. */
  readonly backoff: BackoffOptions;
  /** Multiplies the welcomed heartbeat interval (<1 heartbeats faster). */
  readonly heartbeatScale: number;
  /** Delay before a config-fail agent reports ConfigStatus ok:false after coming back. */
  readonly configFailDelayMs: number;
  /** Pause between the phases of an upgrade (makes progress visible in demos). */
  readonly stepMs: number;
  /** The chance that a deferring agent answers an offer DEFERRED. */
  readonly deferChance: number;
  /** Download artifacts (default) or trust the operation's size and sha256 (`--no-download`). */
  readonly download: boolean;
  /** One download per artifact shared by the fleet (default), or one per agent. */
  readonly shareDownloads: boolean;
  /** The only origins node tokens are sent to (see `trustedOrigins`). */
  readonly trustedOrigins: readonly string[];
  /** The stall timeout, deadline and minimum rate of downloads. */
  readonly downloadPolicy: DownloadPolicy;
  /** Grace for a half-closed stream to finish before it is cancelled. */
  readonly closeGraceMs: number;
  /** Cancel a stream that is not welcomed within this long. */
  readonly welcomeTimeoutMs: number;
}

/** The fleet-wide context handed to each agent. */
export interface AgentRuntime {
  readonly server: string;
  /** The fleet's join token, used until an agent holds a node token. */
  readonly joinToken: string | undefined;
  readonly clientConstructor: AgentControlClientConstructor;
  readonly channelOptions: grpc.ChannelOptions;
  /** The stream's credentials (TLS, mTLS or clear text), shared by every channel. */
  readonly credentials: grpc.ChannelCredentials;
  readonly settings: AgentSettings;
  readonly ticker: Ticker;
  readonly limiter: ConnectLimiter | undefined;
  readonly artifacts: ArtifactCache;
  readonly verifier: ReleaseVerifier;
  readonly store: StateStore;
  readonly log: Logger;
}
