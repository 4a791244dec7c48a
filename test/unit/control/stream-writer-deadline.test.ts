/**
 * A stream ended with a status that cannot be sent (its agent stopped reading) has its
 * HTTP/2 stream reset after the close grace of the writer's clock, and only then; a stream
 * whose HTTP/2 stream closed in time is left alone.
 */
import { EventEmitter } from "node:events";
import http2 from "node:http2";
import { status } from "@grpc/grpc-js";
import { describe, expect, it } from "vitest";
import { StreamWriter } from "../../../control/agents/stream-writer.js";
import { ManualClock } from "../../../control/manual-clock.js";

const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A grpc-js server call as far as the writer reaches into it, down to its HTTP/2 stream. */
function fakeCall() {
  const stream = Object.assign(new EventEmitter(), {
    destroyed: false,
    writableFinished: false,
    resets: [] as number[],
    close(code: number) {
      this.resets.push(code);
    },
  });
  const call = Object.assign(new EventEmitter(), {
    call: { stream },
    write: () => true,
    end: () => undefined,
  });
  call.on("error", () => undefined);
  // biome-ignore lint/suspicious/noExplicitAny: the writer reaches only the members above.
  return { call: call as any, stream };
}

describe("the close deadline of a stream writer", () => {
  it("resets a stuck HTTP/2 stream 2 s of the clock after the status, not before", async () => {
    const clock = new ManualClock(0);
    const { call, stream } = fakeCall();
    const writer = new StreamWriter(call, 4, clock, () => undefined);
    writer.end(status.RESOURCE_EXHAUSTED, "send queue full");
    clock.advanceTo(1999);
    await settle();
    expect(stream.resets).toEqual([]);
    clock.advanceTo(2000);
    await settle();
    expect(stream.resets).toEqual([http2.constants.NGHTTP2_CANCEL]);
  });

  it("leaves alone an HTTP/2 stream that closed within the grace", async () => {
    const clock = new ManualClock(0);
    const { call, stream } = fakeCall();
    const writer = new StreamWriter(call, 4, clock, () => undefined);
    writer.end(status.UNAVAILABLE, "shutting down");
    clock.advanceTo(500);
    stream.emit("close");
    await settle();
    expect(clock.nextDue()).toBeUndefined();
    clock.advanceTo(5000);
    await settle();
    expect(stream.resets).toEqual([]);
  });
});
