/**
 * One GET of an artifact (or of a range of it, to resume): its timers (stall, minimum rate,
 * deadline), its size limit, and what its answer means for the download — a body handed to
 * a sink chunk by chunk, a body cut short, a 503 to wait out, a redirect to check, a range the
 * origin cannot serve, or a failure. Redirects, waits and resumes are the callers'
 * (download.ts, download-resume.ts).
 */
import { connectionLost, networkReason } from "./download-errors.js";
import { fetchWithTls } from "./download-https.js";
import type { DownloadTls } from "./download-origins.js";
import { type DownloadPolicy, type DownloadResult, downloadDeadlineMs } from "./download-policy.js";

/** A failed download's result. */
export type DownloadFailed = Extract<DownloadResult, { ok: false }>;

/** What identifies the file an answer came from (for `If-Range`). */
export interface Validator {
  /** A strong entity tag, quotes included; weak tags cannot validate a range. */
  readonly etag?: string | undefined;
  readonly lastModified?: string | undefined;
}

/** Where the bytes of a 200 or 206 answer go. */
export interface BodySink {
  /**
   * Called once, before any byte: the body's first byte is at `start` of the artifact (0 for
   * a 200, the asked offset for a 206), and `validator` identifies the file it comes from.
   */
  begin(start: number, validator: Validator): Promise<void>;
  /** Called with each piece of the body, in order. */
  write(chunk: Uint8Array): Promise<void>;
}

/**
 * The time and bytes of one download over all its GETs: the deadline and the minimum rate
 * are judged on the whole, so resuming never restarts the slow-retrieval clock.
 */
export interface Pace {
  /** `Date.now()` when the download began. */
  readonly startedAt: number;
  /** Time spent waiting out 503 answers (not held against the rate). */
  waitedMs: number;
  /** Bytes received so far, by every GET of the download. */
  bytes: number;
}

/** A new {@link Pace}, starting now. */
export function startPace(): Pace {
  return { startedAt: Date.now(), waitedMs: 0, bytes: 0 };
}

/** What one GET asks for. */
export interface AttemptRequest {
  readonly url: string;
  /** The artifact's exact size. */
  readonly size: number;
  readonly policy: DownloadPolicy;
  readonly signal: AbortSignal;
  readonly authorization: string | undefined;
  /** True: a redirect is returned to be checked; false: a redirect fails the GET. */
  readonly manualRedirects: boolean;
  readonly tls: DownloadTls | undefined;
  /** First byte wanted; above 0 a `Range: bytes=from-` is sent. */
  readonly from: number;
  /** `If-Range` to send with the range (the validator of the kept bytes). */
  readonly ifRange?: string | undefined;
  readonly pace: Pace;
}

/** What one GET came to. */
export type Attempt =
  /** A 200 or 206 body went to the sink (see `BodySink.begin`); `cut` when it ended short. */
  | { readonly kind: "body"; readonly cut?: DownloadFailed | undefined }
  /** The download failed: an error status, too large, too slow, aborted, no answer. */
  | { readonly kind: "failed"; readonly result: DownloadFailed }
  /** 416, or a 206 of another range than asked: the kept bytes cannot be continued here. */
  | { readonly kind: "unsatisfiable"; readonly reason: string }
  | { readonly kind: "busy"; readonly retryAfterMs: number }
  /** The connection was closed or reset before any answer (the GET may be sent again). */
  | { readonly kind: "lost"; readonly result: DownloadFailed }
  | { readonly kind: "redirect"; readonly to: string };

const MAX_RETRY_AFTER_MS = 30_000;

/** Why `pace` is too slow for `size` bytes under `policy` now, or undefined. */
export function tooSlow(pace: Pace, size: number, policy: DownloadPolicy): string | undefined {
  const elapsed = Date.now() - pace.startedAt - pace.waitedMs;
  const deadlineMs = downloadDeadlineMs(size, policy);
  if (elapsed >= deadlineMs) {
    return `not done by its deadline of ${deadlineMs} ms (${pace.bytes} of ${size} bytes)`;
  }
  const rate = Math.floor((pace.bytes * 1000) / Math.max(elapsed, 1));
  if (elapsed >= policy.graceMs && rate < policy.minBytesPerSecond) {
    return `${rate} bytes/s after ${elapsed} ms, below the minimum of ${policy.minBytesPerSecond} bytes/s`;
  }
  return undefined;
}

/**
 * Sends one GET and hands its body to `sink`; see {@link Attempt}. At most the bytes that
 * remain of the artifact are read (more fail `artifact_too_large`); no progress for
 * `stallMs`, a network error or a body shorter than announced after the answer began is a
 * cut; the pace is judged every second (and at its deadline) and fails `download_too_slow`.
 */
export async function attemptOnce(request: AttemptRequest, sink: BodySink): Promise<Attempt> {
  const { url, size, policy, signal, pace, from } = request;
  const controller = new AbortController();
  const abort = () => controller.abort();
  signal.addEventListener("abort", abort, { once: true });
  let stalled = false;
  let slow: string | undefined;
  /** The artifact offset reached by this GET's body (from `from` or 0). */
  let position = from;
  /** Milliseconds from the start to the answer's headers; undefined before them. */
  let headersMs: number | undefined;
  const started = Date.now();
  let timer = setTimeout(onStall, policy.stallMs);
  function onStall() {
    stalled = true;
    controller.abort();
  }
  const progress = () => {
    clearTimeout(timer);
    timer = setTimeout(onStall, policy.stallMs);
  };
  const judge = () => {
    slow = tooSlow(pace, size, policy);
    if (slow !== undefined) {
      const headers = headersMs === undefined ? "no response yet" : `headers after ${headersMs} ms`;
      slow = `${slow} (${headers})`;
      controller.abort();
    }
  };
  const rateTimer = setInterval(judge, Math.max(50, Math.min(1000, policy.graceMs || 1000)));
  const remainingMs =
    downloadDeadlineMs(size, policy) - (Date.now() - pace.startedAt - pace.waitedMs);
  const deadlineTimer = setTimeout(judge, Math.max(0, remainingMs));
  let writer: Pipeline | undefined;
  const failed = (message: string, code: DownloadFailed["code"] = "download_failed"): Attempt => ({
    kind: "failed",
    result: { ok: false, code, message },
  });
  try {
    const headers: Record<string, string> = {};
    if (request.authorization !== undefined) headers.authorization = request.authorization;
    if (from > 0) {
      headers.range = `bytes=${from}-`;
      if (request.ifRange !== undefined) headers["if-range"] = request.ifRange;
    }
    const init = Object.keys(headers).length > 0 ? { headers } : {};
    const response =
      request.tls !== undefined && url.startsWith("https:")
        ? await fetchWithTls(url, request.tls, {
            signal: controller.signal,
            ...init,
            redirect: request.manualRedirects ? "manual" : "error",
          })
        : await fetch(url, {
            signal: controller.signal,
            ...init,
            ...(request.manualRedirects
              ? { redirect: "manual" as const }
              : request.authorization !== undefined
                ? { redirect: "error" as const }
                : {}),
          });
    headersMs = Date.now() - started;
    const status = response.status;
    const location = response.headers.get("location");
    if (request.manualRedirects && status >= 300 && status < 400 && location !== null) {
      await response.body?.cancel();
      try {
        return { kind: "redirect", to: new URL(location, url).href };
      } catch {
        return failed(`GET ${url}: a bad redirect`);
      }
    }
    const retryAfter = Number(response.headers.get("retry-after") ?? Number.NaN);
    if (status === 503 && Number.isFinite(retryAfter) && retryAfter >= 0) {
      await response.body?.cancel();
      return { kind: "busy", retryAfterMs: Math.min(retryAfter * 1000, MAX_RETRY_AFTER_MS) };
    }
    if (status === 416 && from > 0) {
      await response.body?.cancel();
      return { kind: "unsatisfiable", reason: `GET ${url} from byte ${from}: HTTP 416` };
    }
    if (!response.ok || response.body === null) {
      await response.body?.cancel();
      return failed(`GET ${url}: HTTP ${status}`);
    }
    let start = 0;
    if (status === 206) {
      const range = response.headers.get("content-range") ?? "";
      if (range !== `bytes ${from}-${size - 1}/${size}`) {
        await response.body.cancel();
        return {
          kind: "unsatisfiable",
          reason: `GET ${url}: asked for bytes ${from}-${size - 1}/${size}, answered 206 with Content-Range ${JSON.stringify(range)}`,
        };
      }
      start = from;
    }
    const room = size - start;
    const announced = Number(response.headers.get("content-length") ?? Number.NaN);
    if (announced > room) {
      await response.body.cancel();
      return failed(tooLargeMessage(url, size), "artifact_too_large");
    }
    writer = pipeline(sink, start, validatorOf(response.headers));
    position = start;
    const reader = response.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      progress();
      if (position + value.byteLength > size) {
        await reader.cancel();
        await writer.settled();
        return failed(tooLargeMessage(url, size), "artifact_too_large");
      }
      position += value.byteLength;
      pace.bytes += value.byteLength;
      if (!(await writer.write(value))) {
        await reader.cancel();
        break;
      }
    }
    const unkept = await writer.settled();
    if (unkept !== undefined) return failed(`GET ${url}: could not keep the download: ${unkept}`);
    if (position < size) {
      const message = `GET ${url}: body ended after ${position} of ${size} bytes`;
      // A body as long as it was announced is the origin's whole file: a shorter one.
      if (announced === position - start) return failed(message);
      return { kind: "body", cut: { ok: false, code: "download_failed", message } };
    }
    return { kind: "body" };
  } catch (error) {
    // Every byte read before the error is kept before the cut is reported.
    const unkept = await writer?.settled();
    if (unkept !== undefined) return failed(`GET ${url}: could not keep the download: ${unkept}`);
    if (slow !== undefined) return failed(`GET ${url}: ${slow}`, "download_too_slow");
    const reason = stalled
      ? `no data for ${policy.stallMs} ms`
      : signal.aborted
        ? "aborted"
        : networkReason(error);
    if (headersMs === undefined) {
      const result: DownloadFailed = {
        ok: false,
        code: "download_failed",
        message: `GET ${url}: ${reason} before a response`,
      };
      const lost = !stalled && !signal.aborted && connectionLost(error);
      return lost ? { kind: "lost", result } : { kind: "failed", result };
    }
    const message = `GET ${url}: ${reason} after ${position} of ${size} bytes (headers after ${headersMs} ms)`;
    if (signal.aborted) return failed(message);
    return { kind: "body", cut: { ok: false, code: "download_failed", message } };
  } finally {
    clearTimeout(timer);
    clearInterval(rateTimer);
    clearTimeout(deadlineTimer);
    signal.removeEventListener("abort", abort);
  }
}

/** Bytes read but not yet written to the sink before reading waits for the sink. */
const MAX_UNWRITTEN_BYTES = 8 * 1024 * 1024;

/**
 * A body's way to its sink: chunks are written in order while reading goes on, so what the
 * connection delivered is taken out of the response stream at once (an error empties the
 * stream's queue, and a cut would lose what waited there behind a slow fsync).
 */
interface Pipeline {
  /** Queues `chunk`; resolves at once unless too much waits; false once the sink failed. */
  write(chunk: Uint8Array): Promise<boolean>;
  /** Waits for every queued write; the sink's failure (a full disk) as text, or undefined. */
  settled(): Promise<string | undefined>;
}

function pipeline(sink: BodySink, start: number, validator: Validator): Pipeline {
  let failure: string | undefined;
  let unwritten = 0;
  const guard = (work: () => Promise<void>) => async () => {
    if (failure !== undefined) return;
    try {
      await work();
    } catch (error) {
      failure = networkReason(error);
    }
  };
  let writing = guard(() => sink.begin(start, validator))();
  return {
    write: async (chunk) => {
      unwritten += chunk.byteLength;
      writing = writing.then(
        guard(async () => {
          await sink.write(chunk);
          unwritten -= chunk.byteLength;
        }),
      );
      if (unwritten >= MAX_UNWRITTEN_BYTES) await writing;
      return failure === undefined;
    },
    settled: async () => {
      await writing;
      return failure;
    },
  };
}

/** The validator of an answer: its strong ETag, and its Last-Modified. */
function validatorOf(headers: Headers): Validator {
  const etag = headers.get("etag") ?? undefined;
  const lastModified = headers.get("last-modified") ?? undefined;
  return {
    ...(etag?.startsWith('"') ? { etag } : {}),
    ...(lastModified === undefined ? {} : { lastModified }),
  };
}

/** The message of `artifact_too_large`. */
export function tooLargeMessage(url: string, size: number): string {
  return `GET ${url}: more than the ${size} bytes the release allows`;
}
