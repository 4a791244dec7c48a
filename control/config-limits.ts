/**
 * `limits.*` in the config: what one Control process holds and accepts on its agent streams
 * (message sizes, rates, byte budgets, handshakes, streams), how long it drains, and the
 * admin listener's `limits.admin*` (config-admin.ts).
 */
import { type AdminLimitsConfig, readAdminLimits } from "./config-admin.js";
import type { ConfigInput, Reader } from "./config-reader.js";

/** The validated `limits.*` of one Control process. */
export type LimitsConfig = {
  /** Largest message sent on an agent stream (and accepted, unless the next is smaller). */
  readonly maxMessageBytes: number;
  /**
   * Largest message accepted from an Agent (default 65536: a Hello at its limits is about
   * 25 KiB); a larger one ends the stream with RESOURCE_EXHAUSTED before it is decoded.
   */
  readonly maxAgentMessageBytes: number;
  /** Operations queued for one stream before it is closed as too slow. */
  readonly sendQueueLength: number;
  /** Messages per second one agent stream may send, averaged over a burst. */
  readonly agentMessagesPerSecond: number;
  /**
   * Bytes per second one agent stream may send (default 16384), in bursts of up to
   * `agentStreamBurstBytes` (default 262144, at least `maxAgentMessageBytes`); a stream over
   * it ends with RESOURCE_EXHAUSTED.
   */
  readonly agentStreamBytesPerSecond: number;
  readonly agentStreamBurstBytes: number;
  /** Streams allowed to be between connect and Welcome at once. */
  readonly maxConcurrentHandshakes: number;
  /**
   * Handshakes one credential (join token, node token, client certificate; every stream
   * without a credential counts as one) may have in progress at once (default 4).
   */
  readonly handshakesPerCredential: number;
  /**
   * Agent streams this process holds at once (`AGENT_CONTROL_MAX_STREAMS`); beyond it a
   * new stream is refused with RESOURCE_EXHAUSTED. Undefined: derived at start from the
   * open-file limit (control/agents/stream-budget.ts).
   */
  readonly maxStreams: number | undefined;
  /**
   * Connections to the agent port one source address (an IPv6 /64) may hold before a stream
   * on them authenticated (default 32); the next one is closed at accept. Loopback is not
   * counted (control/agents/unauthenticated-connections.ts).
   */
  readonly agentUnauthenticatedConnectionsPerAddress: number;
  /** How long SIGTERM waits for streams to drain. */
  readonly shutdownGraceSeconds: number;
} & AdminLimitsConfig;

/**
 * Reads `limits.*` from the `limits` section with their defaults and ranges; `problems` gets
 * each bad value (named by its key). The cross-check of the burst against the largest agent
 * message is `checkStreamBurst` (config-checks.ts).
 */
export function readLimits(v: Reader, limits: ConfigInput, problems: string[]): LimitsConfig {
  return {
    maxMessageBytes: v.integer(limits, "limits.maxMessageBytes", 4 * 1024 * 1024, 1024, 64 << 20),
    maxAgentMessageBytes: v.integer(limits, "limits.maxAgentMessageBytes", 65536, 1024, 64 << 20),
    sendQueueLength: v.integer(limits, "limits.sendQueueLength", 256, 1, 100_000),
    agentMessagesPerSecond: v.number(limits, "limits.agentMessagesPerSecond", 50, 0.1, 1e6),
    agentStreamBytesPerSecond: v.integer(
      limits,
      "limits.agentStreamBytesPerSecond",
      16384,
      1024,
      1 << 30,
    ),
    agentStreamBurstBytes: v.integer(limits, "limits.agentStreamBurstBytes", 262144, 1024, 1 << 30),
    maxConcurrentHandshakes: v.integer(limits, "limits.maxConcurrentHandshakes", 512, 1, 1e6),
    handshakesPerCredential: v.integer(limits, "limits.handshakesPerCredential", 4, 1, 1e6),
    maxStreams:
      limits.maxStreams === undefined
        ? undefined
        : v.integer(limits, "limits.maxStreams", 1, 1, 10_000_000),
    agentUnauthenticatedConnectionsPerAddress: v.integer(
      limits,
      "limits.agentUnauthenticatedConnectionsPerAddress",
      32,
      1,
      1_000_000,
    ),
    shutdownGraceSeconds: v.number(limits, "limits.shutdownGraceSeconds", 10, 0, 3600),
    ...readAdminLimits(v, limits, problems),
  };
}
