/**
 * Progress of a large request body (`release register` uploading artifacts): the body is cut
 * into chunks the HTTP client writes one at a time, each written chunk counted, and the count
 * shown on stderr as a line that is rewritten on a terminal, or printed at every tenth
 * otherwise. Pure but for the sink and the clock it is given.
 */
import type { UniversalClientFn } from "@connectrpc/connect/protocol";
import { formatBytes } from "./bytes.js";

/** Bytes of one written piece of a large body: small enough to show progress, large enough not to cost. */
export const UPLOAD_CHUNK_BYTES = 1 << 20;

/** Bodies smaller than this show no progress (they take well under a second on any link). */
export const PROGRESS_MIN_BYTES = 8 << 20;

/**
 * Yields `body`'s bytes in pieces of at most `chunkBytes`, calling `onBytes` with the running
 * total after the consumer asked for the next piece (that is, once the previous one was
 * written: Node's HTTP client asks for the next piece from the write callback).
 */
export async function* chunked(
  body: AsyncIterable<Uint8Array>,
  chunkBytes: number,
  onBytes: (sent: number) => void,
): AsyncIterable<Uint8Array> {
  let sent = 0;
  for await (const chunk of body) {
    for (let at = 0; at < chunk.length; at += chunkBytes) {
      const piece = chunk.subarray(at, Math.min(chunk.length, at + chunkBytes));
      yield piece;
      sent += piece.length;
      onBytes(sent);
    }
  }
}

/**
 * Wraps an HTTP client so that every request body is written in {@link UPLOAD_CHUNK_BYTES}
 * pieces, `onBytes` hearing the running total of the request in flight.
 */
export function progressHttpClient(
  inner: UniversalClientFn,
  onBytes: (sent: number) => void,
): UniversalClientFn {
  return (request) =>
    inner(
      request.body === undefined
        ? request
        : { ...request, body: chunked(request.body, UPLOAD_CHUNK_BYTES, onBytes) },
    );
}

/** Where progress goes, and how. */
export interface ProgressSink {
  write(text: string): unknown;
  /** A terminal: one line rewritten in place (`\r`); otherwise a line at every tenth. */
  readonly isTTY?: boolean | undefined;
}

/** A progress line for `what` of `total` bytes: `report(sent)` as bytes go, `done()` at the end. */
export interface ProgressLine {
  report(sent: number): void;
  done(): void;
}

/**
 * Shows the upload of `total` bytes described by `what` on `sink`, with rates from `nowMs`.
 * Bodies under {@link PROGRESS_MIN_BYTES} show nothing. On a terminal the line is rewritten at
 * most every 200 ms; elsewhere (a log, CI) one line per tenth uploaded, so a log stays short.
 */
export function progressLine(
  sink: ProgressSink,
  what: string,
  total: number,
  nowMs: () => number,
): ProgressLine {
  if (total < PROGRESS_MIN_BYTES) return { report() {}, done() {} };
  const started = nowMs();
  let lastShown = Number.NEGATIVE_INFINITY;
  let lastTenth = 0;
  let last = 0;
  const text = (sent: number) => {
    const percent = Math.min(100, Math.floor((sent / total) * 100));
    const seconds = (nowMs() - started) / 1000;
    const rate = seconds > 0 ? `, ${formatBytes(sent / seconds)}/s` : "";
    return `${what}: ${percent}% (${formatBytes(sent)} of ${formatBytes(total)}${rate})`;
  };
  return {
    report(sent) {
      last = sent;
      if (sink.isTTY === true) {
        if (nowMs() - lastShown < 200) return;
        lastShown = nowMs();
        sink.write(`\r${text(sent)}\u001b[K`);
        return;
      }
      const tenth = Math.floor((sent / total) * 10);
      if (tenth <= lastTenth || tenth >= 10) return;
      lastTenth = tenth;
      sink.write(`${text(sent)}\n`);
    },
    done() {
      const seconds = ((nowMs() - started) / 1000).toFixed(1);
      const end = `${what}: ${formatBytes(Math.max(last, total))} sent in ${seconds} s; waiting for Control to verify and store it`;
      sink.write(sink.isTTY === true ? `\r${end}\u001b[K\n` : `${end}\n`);
    },
  };
}
