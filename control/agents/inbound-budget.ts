/**
 * What one agent stream may send: a message rate (`limits.agentMessagesPerSecond`, bursts of
 * twice that, at least 20) and a byte rate (`limits.agentStreamBytesPerSecond`, bursts of
 * `limits.agentStreamBurstBytes`), both token buckets on Control's Clock. Each message costs
 * one message and its encoded size in bytes, as the server decoded it ({@link WIRE_BYTES});
 * a message without that mark (one handed over in memory, as the simulation does) costs no
 * bytes. A stream over either budget is ended with RESOURCE_EXHAUSTED by its session; other
 * streams have budgets of their own.
 */
import { TokenBucket } from "./rate-limit.js";

/** Set by the agent server's decoder on each message: its size on the wire, in bytes. */
export const WIRE_BYTES = Symbol("wireBytes");

/** The byte budget of a stream. */
export interface ByteBudget {
  /** Bytes per second sustained. */
  readonly bytesPerSecond: number;
  /** Bytes a stream may send at once above the rate (at least the largest message allowed). */
  readonly burstBytes: number;
}

/** The size {@link WIRE_BYTES} records on `message`, or 0 when it carries none. */
export function wireBytes(message: object): number {
  const size = (message as { [WIRE_BYTES]?: unknown })[WIRE_BYTES];
  return typeof size === "number" ? size : 0;
}

/** Marks `message` with its encoded size; returns it. */
export function withWireBytes<T extends object>(message: T, bytes: number): T {
  Object.defineProperty(message, WIRE_BYTES, { value: bytes, enumerable: false });
  return message;
}

/** The message and byte budgets of one stream; see the file's TSDoc. */
export class InboundBudget {
  readonly #messages: TokenBucket;
  readonly #bytes: TokenBucket | undefined;

  /**
   * @param messagesPerSecond the message rate (> 0)
   * @param bytes the byte budget; undefined: bytes are not limited
   */
  constructor(
    messagesPerSecond: number,
    private readonly bytes: ByteBudget | undefined,
    nowMs: number,
  ) {
    this.#messages = new TokenBucket(messagesPerSecond, Math.max(20, messagesPerSecond * 2), nowMs);
    this.#bytes = bytes && new TokenBucket(bytes.bytesPerSecond, bytes.burstBytes, nowMs);
  }

  /**
   * Charges `message` to the stream at `nowMs`: undefined when it is within both budgets,
   * otherwise the detail the stream ends with.
   */
  admit(message: object, nowMs: number): string | undefined {
    if (!this.#messages.take(nowMs)) return "message rate limit exceeded";
    const size = wireBytes(message);
    if (this.#bytes && size > 0 && !this.#bytes.take(nowMs, size)) {
      const b = this.bytes as ByteBudget;
      return `byte rate limit exceeded: an agent stream may send ${b.bytesPerSecond} bytes per second, in bursts of up to ${b.burstBytes} (limits.agentStreamBytesPerSecond, limits.agentStreamBurstBytes)`;
    }
    return undefined;
  }
}
