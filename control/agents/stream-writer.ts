/**
 * The sending side of one agent stream: messages go out in order, at the pace the agent
 * reads them, through a bounded queue; an agent that stops reading cannot make Control
 * hold its messages (or its stream) without bound.
 */
import http2, { type ServerHttp2Stream } from "node:http2";
import { type ServerDuplexStream, status } from "@grpc/grpc-js";
import type { ControlMessage } from "../../proto/gen/agentcontrol/v1/agent_control_pb.js";
import type { Clock } from "../clock.js";
import { scheduleOnce } from "../clock-timer.js";
import type { WireMessage } from "../shared/wire-message.js";

/** How long a closed stream may take to send its status before its HTTP/2 stream is reset. */
const CLOSE_GRACE_MS = 2000;

/**
 * Writes {@link ControlMessage}s to one grpc-js server stream. While the stream accepts
 * writes they go straight to grpc-js; once it signals backpressure they wait in a queue of
 * at most `maxQueued`, flushed in order on `drain`. One more message than that calls
 * `onFull` (the session then closes the stream). After {@link StreamWriter.end} or
 * {@link StreamWriter.abandon} nothing more is written.
 */
export class StreamWriter {
  private readonly queue: (ControlMessage | WireMessage)[] = [];
  private writable = true;
  private closed = false;

  constructor(
    private readonly call: ServerDuplexStream<unknown, ControlMessage | WireMessage>,
    private readonly maxQueued: number,
    private readonly clock: Clock,
    private readonly onFull: () => void,
  ) {
    call.on("drain", () => this.drain());
  }

  /**
   * Sends `message`, or queues it while the stream is backed up. Returns false when it will
   * never be sent: the writer is closed, or the queue was full (`onFull` has been called).
   */
  write(message: ControlMessage | WireMessage): boolean {
    if (this.closed) return false;
    if (!this.writable) {
      if (this.queue.length >= this.maxQueued) {
        this.onFull();
        return false;
      }
      this.queue.push(message);
      return true;
    }
    this.writable = this.call.write(message);
    return true;
  }

  /**
   * Ends the stream with gRPC status `code` (OK ends it normally) and drops what is queued.
   * If the status cannot be sent within 2 s of the writer's clock (grpc-js sends it only
   * after every message already handed to it, and the agent is not reading), the HTTP/2
   * stream is reset.
   */
  end(code: number, details: string): void {
    if (this.closed) return;
    this.closed = true;
    this.queue.length = 0;
    if (code === status.OK) this.call.end();
    else this.call.emit("error", { code, details });
    resetIfStuck(this.call, this.clock, CLOSE_GRACE_MS);
  }

  /** Stops writing to a stream that has already ended, and drops what is queued. */
  abandon(): void {
    this.closed = true;
    this.queue.length = 0;
  }

  private drain(): void {
    this.writable = true;
    while (this.writable && this.queue.length > 0 && !this.closed) {
      const next = this.queue.shift() as ControlMessage;
      this.writable = this.call.write(next);
    }
  }
}

/**
 * Resets the HTTP/2 stream under `call` (RST_STREAM CANCEL) if it has not finished sending
 * within `graceMs`. grpc-js sends the status only after every queued message, so a stream
 * whose agent stopped reading would otherwise stay open, holding its messages, for as long
 * as the connection lives. The agent sees CANCELLED and reconnects.
 */
function resetIfStuck(
  call: ServerDuplexStream<unknown, unknown>,
  clock: Clock,
  graceMs: number,
): void {
  const stream = http2StreamOf(call);
  if (!stream || stream.destroyed) return;
  const timer = scheduleOnce(clock, graceMs, () => {
    if (!stream.destroyed && !stream.writableFinished) {
      stream.close(http2.constants.NGHTTP2_CANCEL);
    }
  });
  // An HTTP/2 stream that closed (its status sent, or reset by the agent) needs no reset.
  stream.once("close", () => timer.cancel());
}

/** The HTTP/2 stream of a grpc-js server call (grpc-js 1.14 keeps it on its base call). */
function http2StreamOf(call: ServerDuplexStream<unknown, unknown>): ServerHttp2Stream | undefined {
  let inner: unknown = (call as unknown as { call?: unknown }).call;
  for (let hop = 0; hop < 8 && inner; hop += 1) {
    const stream = (inner as { stream?: ServerHttp2Stream }).stream;
    if (stream && typeof stream.close === "function") return stream;
    inner = (inner as { nextCall?: unknown }).nextCall;
  }
  return undefined;
}
