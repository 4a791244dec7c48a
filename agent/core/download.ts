/**
 * Downloads an artifact as a careful Agent would: at most `size` bytes (aborting as soon
 * as more arrive), with a stall timeout, waiting as told when Control answers 503 with
 * Retry-After (too many downloads at once) and trying again a request whose connection was
 * lost before any response (artifact-cache.ts shares one download per sha256 among the
 * agents of a process).
 * The node token goes only to the origins the agent was configured with (Control's and its
 * downloads listener's), never to another host, port or scheme an artifact URL names. A
 * download has a deadline and a minimum rate derived from its signed size (slow retrieval).
 */
import { sha256Hex } from "../../control/shared/release/digest.js";
import { connectionLost, networkReason } from "./download-errors.js";
import { fetchWithTls } from "./download-https.js";
import type { DownloadTls } from "./download-origins.js";

export {
  type ArtifactOrigins,
  artifactOriginRefusal,
  artifactOrigins,
  type DownloadTls,
  downloadAuthorization,
  downloadTls,
  trustedOrigins,
} from "./download-origins.js";

/** Why a download failed; the codes agents report in FAILED. */
export type DownloadFailure =
  | "download_failed"
  | "artifact_too_large"
  | "download_too_slow"
  | "artifact_origin_refused";

/**
 * Why a URL must not be fetched (see `artifactOriginRefusal`), or undefined when it may:
 * asked of the artifact URL before any request and of each redirect before it is followed.
 */
export type OriginCheck = (url: string) => string | undefined;

/** Redirects followed (each to an origin the check allows) before a download fails. */
export const MAX_REDIRECTS = 5;

/**
 * How long a download may take. A server that keeps a download alive with a trickle (TUF's
 * slow-retrieval attack) is cut off: after `graceMs` the average rate since the start must
 * stay at or above `minBytesPerSecond`, and the whole download must end by its deadline,
 * `graceMs` plus the signed size at the minimum rate ({@link downloadDeadlineMs}).
 */
export interface DownloadPolicy {
  /** Abort a download that makes no progress for this long. */
  readonly stallMs: number;
  /** Time allowed before the rate is judged (connection set-up, a slow start). */
  readonly graceMs: number;
  /** The slowest average rate accepted once the grace is over. */
  readonly minBytesPerSecond: number;
}

/** The Agent's policy: 30 s without data, 30 s of grace, then at least 16 KiB/s. */
export const DEFAULT_DOWNLOAD_POLICY: DownloadPolicy = Object.freeze({
  stallMs: 30_000,
  graceMs: 30_000,
  minBytesPerSecond: 16 * 1024,
});

/** The overall deadline of a download of `size` bytes under `policy`, in ms. */
export function downloadDeadlineMs(size: number, policy: DownloadPolicy): number {
  return policy.graceMs + Math.ceil((size * 1000) / policy.minBytesPerSecond);
}

/** A fetched body with its digest, computed once from exactly these bytes. */
export interface FetchedArtifact {
  readonly bytes: Uint8Array;
  readonly sha256: string;
}

/** The outcome of one download. */
export type DownloadResult =
  | { ok: true; artifact: FetchedArtifact }
  | { ok: false; code: DownloadFailure; message: string };

/** What to fetch and how much may arrive. */
export interface DownloadRequest {
  url: string;
  /** Exact expected size: more bytes than this abort the download. */
  size: number;
  /** Expected lower-case hex sha256 (the cache key). */
  sha256: string;
  /** `Authorization` header to send (see `downloadAuthorization`); not part of the key. */
  authorization?: string | undefined;
}

/** 503 answers waited out before a download fails. */
export const MAX_BUSY_RETRIES = 10;
/** Connections lost before a response that are tried again before a download fails. */
export const MAX_CONNECTION_LOST_RETRIES = 2;
const MAX_RETRY_AFTER_MS = 30_000;

/**
 * GETs `url`, reading at most `maxBytes`; fails with `artifact_too_large` when more
 * arrive (or Content-Length announces more), `download_too_slow` past the policy's
 * deadline or below its minimum rate, `download_failed` on an HTTP error, a
 * network error, a short body or no progress for `stallMs`. A 503 with Retry-After in
 * seconds (Control's "too many downloads at once") is retried after it (at most 30 s each,
 * {@link MAX_BUSY_RETRIES} times); any other error status fails at once. A connection closed
 * or reset before any response (a server closing a kept-alive connection as the request goes
 * out) is tried again at once, {@link MAX_CONNECTION_LOST_RETRIES} times. With a credential
 * and no `allowed`, no redirect is followed (it fails `download_failed`), so the token stays
 * at its origin. With `allowed`, a URL it refuses fails `artifact_origin_refused` before any
 * request: the artifact's own, and each redirect's target before it is followed (at most
 * {@link MAX_REDIRECTS}); the credential follows a redirect only within its origin.
 * With `tls` (see `downloadTls`), an https URL is fetched with its CA and, when it has them,
 * its client certificate and key, which like the credential follow a redirect only within
 * their origin (the CA goes on verifying); with `tls`, no redirect is followed but by hand.
 */
export async function fetchArtifact(
  url: string,
  maxBytes: number,
  policy: DownloadPolicy,
  signal: AbortSignal,
  authorization?: string,
  allowed?: OriginCheck,
  tls?: DownloadTls,
): Promise<DownloadResult> {
  let busy = 0;
  let lost = 0;
  let redirects = 0;
  const refused = allowed?.(url);
  if (refused !== undefined) return originRefused(url, refused);
  let target = url;
  let credential = authorization;
  let targetTls = tls;
  for (;;) {
    const manual = allowed !== undefined;
    const attempt = await fetchOnce(
      target,
      maxBytes,
      policy,
      signal,
      credential,
      manual,
      targetTls,
    );
    if ("redirectTo" in attempt) {
      const next = attempt.redirectTo;
      const why = allowed?.(next);
      if (why !== undefined) return originRefused(url, `a redirect to ${next}: ${why}`);
      if (redirects >= MAX_REDIRECTS) {
        return {
          ok: false,
          code: "download_failed",
          message: `GET ${url}: more than ${MAX_REDIRECTS} redirects`,
        };
      }
      redirects++;
      // The node token stays at its origin: a redirect elsewhere is followed without it.
      // So does the client certificate; the CA still verifies the next origin.
      if (new URL(next).origin !== new URL(target).origin) {
        credential = undefined;
        if (targetTls !== undefined) targetTls = tlsWithoutIdentity(targetTls);
      }
      target = next;
      continue;
    }
    if ("lostBeforeResponse" in attempt) {
      if (lost >= MAX_CONNECTION_LOST_RETRIES) return attempt.lostBeforeResponse;
      lost++;
      continue;
    }
    if (!("retryAfterMs" in attempt)) return attempt;
    if (busy >= MAX_BUSY_RETRIES) {
      return {
        ok: false,
        code: "download_failed",
        message: `GET ${url}: HTTP 503 (busy) ${busy + 1} times`,
      };
    }
    busy++;
    if (!(await wait(attempt.retryAfterMs, signal))) return abortedResult();
  }
}

/**
 * One attempt: a result, a 503 to wait out, a connection lost before any response, or a
 * redirect (only when redirects are followed by hand) to check before it is followed.
 */
type Attempt =
  | DownloadResult
  | { readonly retryAfterMs: number }
  | { readonly lostBeforeResponse: DownloadResult }
  | { readonly redirectTo: string };

async function fetchOnce(
  url: string,
  maxBytes: number,
  policy: DownloadPolicy,
  signal: AbortSignal,
  authorization: string | undefined,
  manualRedirects: boolean,
  tls: DownloadTls | undefined,
): Promise<Attempt> {
  const { stallMs, graceMs, minBytesPerSecond } = policy;
  const controller = new AbortController();
  const abort = () => controller.abort();
  signal.addEventListener("abort", abort, { once: true });
  let stalled = false;
  let tooSlow: string | undefined;
  let total = 0;
  /** Milliseconds from the start to the response's headers; undefined before them. */
  let headersMs: number | undefined;
  const started = Date.now();
  const deadlineMs = downloadDeadlineMs(maxBytes, policy);
  let timer = setTimeout(onStall, stallMs);
  function onStall() {
    stalled = true;
    controller.abort();
  }
  const progress = () => {
    clearTimeout(timer);
    timer = setTimeout(onStall, stallMs);
  };
  const judge = () => {
    const elapsed = Date.now() - started;
    if (elapsed >= deadlineMs) {
      tooSlow = `not done by its deadline of ${deadlineMs} ms (${total} of ${maxBytes} bytes)`;
    } else if (elapsed >= graceMs && (total * 1000) / Math.max(elapsed, 1) < minBytesPerSecond) {
      const rate = Math.floor((total * 1000) / Math.max(elapsed, 1));
      const headers = headersMs === undefined ? "no response yet" : `headers after ${headersMs} ms`;
      tooSlow = `${rate} bytes/s after ${elapsed} ms (${headers}), below the minimum of ${minBytesPerSecond} bytes/s`;
    }
    if (tooSlow !== undefined) controller.abort();
  };
  const rateTimer = setInterval(judge, Math.max(50, Math.min(1000, graceMs || 1000)));
  const deadlineTimer = setTimeout(judge, deadlineMs);
  try {
    const headers = authorization !== undefined ? { headers: { authorization } } : {};
    const response =
      tls !== undefined && url.startsWith("https:")
        ? await fetchWithTls(url, tls, {
            signal: controller.signal,
            ...headers,
            redirect: manualRedirects ? "manual" : "error",
          })
        : await fetch(url, {
            signal: controller.signal,
            ...headers,
            ...(manualRedirects
              ? { redirect: "manual" as const }
              : authorization !== undefined
                ? { redirect: "error" as const }
                : {}),
          });
    headersMs = Date.now() - started;
    const location = response.headers.get("location");
    if (manualRedirects && response.status >= 300 && response.status < 400 && location !== null) {
      await response.body?.cancel();
      try {
        return { redirectTo: new URL(location, url).href };
      } catch {
        return { ok: false, code: "download_failed", message: `GET ${url}: a bad redirect` };
      }
    }
    const retryAfter = Number(response.headers.get("retry-after") ?? Number.NaN);
    if (response.status === 503 && Number.isFinite(retryAfter) && retryAfter >= 0) {
      await response.body?.cancel();
      return { retryAfterMs: Math.min(retryAfter * 1000, MAX_RETRY_AFTER_MS) };
    }
    if (!response.ok || response.body === null) {
      await response.body?.cancel();
      return { ok: false, code: "download_failed", message: `GET ${url}: HTTP ${response.status}` };
    }
    const announced = Number(response.headers.get("content-length") ?? Number.NaN);
    if (announced > maxBytes) {
      await response.body.cancel();
      return tooLarge(url, maxBytes);
    }
    const chunks: Uint8Array[] = [];
    const reader = response.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      progress();
      total += value.byteLength;
      if (total > maxBytes) {
        await reader.cancel();
        return tooLarge(url, maxBytes);
      }
      chunks.push(value);
    }
    if (total < maxBytes) {
      return {
        ok: false,
        code: "download_failed",
        message: `GET ${url}: body ended after ${total} of ${maxBytes} bytes`,
      };
    }
    const bytes = Buffer.concat(chunks, total);
    return { ok: true, artifact: { bytes, sha256: sha256Hex(bytes) } };
  } catch (error) {
    if (tooSlow !== undefined) {
      return { ok: false, code: "download_too_slow", message: `GET ${url}: ${tooSlow}` };
    }
    const reason = stalled
      ? `no data for ${stallMs} ms`
      : signal.aborted
        ? "aborted"
        : networkReason(error);
    const when =
      headersMs === undefined
        ? "before a response"
        : `after ${total} of ${maxBytes} bytes (headers after ${headersMs} ms)`;
    const failed: DownloadResult = {
      ok: false,
      code: "download_failed",
      message: `GET ${url}: ${reason} ${when}`,
    };
    const lost = !stalled && !signal.aborted && headersMs === undefined && connectionLost(error);
    return lost ? { lostBeforeResponse: failed } : failed;
  } finally {
    clearTimeout(timer);
    clearInterval(rateTimer);
    clearTimeout(deadlineTimer);
    signal.removeEventListener("abort", abort);
  }
}

/** `tls` without its client certificate and key (for an origin they must not reach). */
function tlsWithoutIdentity(tls: DownloadTls): DownloadTls | undefined {
  return tls.ca === undefined ? undefined : { ca: tls.ca };
}

/** Sleeps `ms`; false when `signal` aborted first. */
function wait(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

function originRefused(url: string, why: string): DownloadResult {
  return { ok: false, code: "artifact_origin_refused", message: `GET ${url} refused: ${why}` };
}

function tooLarge(url: string, maxBytes: number): DownloadResult {
  return {
    ok: false,
    code: "artifact_too_large",
    message: `GET ${url}: more than the ${maxBytes} bytes the release allows`,
  };
}

/** The result of a download its caller stopped waiting for. */
export function abortedResult(): DownloadResult {
  return { ok: false, code: "download_failed", message: "download aborted" };
}
