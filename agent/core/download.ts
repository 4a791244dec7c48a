/**
 * Downloads an artifact as a careful Agent would: at most `size` bytes (aborting as soon
 * as more arrive), with a stall timeout, waiting as told when Control answers 503 with
 * Retry-After (too many downloads at once) and trying again a request whose connection was
 * lost before any response (artifact-cache.ts shares one download per sha256 among the
 * agents of a process).
 * The node token goes only to the origins the agent was configured with (Control's and its
 * downloads listener's), never to another host, port or scheme an artifact URL names. A
 * download has a deadline and a minimum rate derived from its signed size (slow retrieval).
 * One GET at a time is download-attempt.ts; a download that resumes after a cut is
 * download-resume.ts.
 */
import { sha256Hex } from "../../control/shared/release/digest.js";
import {
  type Attempt,
  attemptOnce,
  type BodySink,
  type DownloadFailed,
  type Pace,
  startPace,
} from "./download-attempt.js";
import type { DownloadTls } from "./download-origins.js";
import type { DownloadPolicy, DownloadResult } from "./download-policy.js";

export {
  type ArtifactOrigins,
  artifactOriginRefusal,
  artifactOrigins,
  type DownloadTls,
  downloadAuthorization,
  downloadTls,
  trustedOrigins,
} from "./download-origins.js";
export {
  DEFAULT_DOWNLOAD_POLICY,
  type DownloadFailure,
  type DownloadPolicy,
  type DownloadResult,
  downloadDeadlineMs,
  type FetchedArtifact,
} from "./download-policy.js";

/**
 * Why a URL must not be fetched (see `artifactOriginRefusal`), or undefined when it may:
 * asked of the artifact URL before any request and of each redirect before it is followed.
 */
export type OriginCheck = (url: string) => string | undefined;

/** Redirects followed (each to an origin the check allows) before a download fails. */
export const MAX_REDIRECTS = 5;

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

/**
 * GETs `url` once, reading at most `maxBytes` into memory; a body cut short is not resumed
 * (download-resume.ts resumes). Fails with `artifact_too_large` when more arrive (or
 * Content-Length announces more), `download_too_slow` past the policy's
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
  const chunks: Uint8Array[] = [];
  let total = 0;
  const memory: BodySink = {
    begin: async () => {
      chunks.length = 0;
      total = 0;
    },
    write: async (chunk) => {
      chunks.push(chunk);
      total += chunk.byteLength;
    },
  };
  const request = { size: maxBytes, policy, signal, authorization, allowed, tls, from: 0 };
  const outcome = await requestArtifact(url, { ...request, pace: startPace() }, memory);
  switch (outcome.kind) {
    case "failed":
      return outcome.result;
    case "unsatisfiable":
      return { ok: false, code: "download_failed", message: outcome.reason };
    case "body": {
      if (outcome.cut !== undefined) return outcome.cut;
      const bytes = Buffer.concat(chunks, total);
      return { ok: true, artifact: { bytes, sha256: sha256Hex(bytes) } };
    }
  }
}

/** What {@link requestArtifact} asks for: one GET's request, with its origin rules. */
export interface ArtifactGet {
  readonly size: number;
  readonly policy: DownloadPolicy;
  readonly signal: AbortSignal;
  readonly authorization?: string | undefined;
  readonly allowed?: OriginCheck | undefined;
  readonly tls?: DownloadTls | undefined;
  /** First byte wanted (a `Range` from it when above 0). */
  readonly from: number;
  readonly ifRange?: string | undefined;
  readonly pace: Pace;
}

/** What a GET came to once its redirects, 503s and lost connections were dealt with. */
export type ArtifactAnswer = Extract<Attempt, { kind: "body" | "failed" | "unsatisfiable" }>;

/**
 * GETs `url` (a range of it when `from` is above 0) into `sink`, following redirects the
 * origin check allows, waiting out 503s and sending again a GET whose connection was lost
 * before any answer, as {@link fetchArtifact} says; the `Range` and `If-Range` go with each.
 */
export async function requestArtifact(
  url: string,
  get: ArtifactGet,
  sink: BodySink,
): Promise<ArtifactAnswer> {
  let busy = 0;
  let lost = 0;
  let redirects = 0;
  const refused = get.allowed?.(url);
  if (refused !== undefined) return originRefused(url, refused);
  let target = url;
  let credential = get.authorization;
  let targetTls = get.tls;
  for (;;) {
    const attempt = await attemptOnce(
      {
        url: target,
        size: get.size,
        policy: get.policy,
        signal: get.signal,
        authorization: credential,
        manualRedirects: get.allowed !== undefined,
        tls: targetTls,
        from: get.from,
        ifRange: get.ifRange,
        pace: get.pace,
      },
      sink,
    );
    switch (attempt.kind) {
      case "body":
      case "failed":
      case "unsatisfiable":
        return attempt;
      case "redirect": {
        const next = attempt.to;
        const why = get.allowed?.(next);
        if (why !== undefined) return originRefused(url, `a redirect to ${next}: ${why}`);
        if (redirects >= MAX_REDIRECTS) {
          return failure(`GET ${url}: more than ${MAX_REDIRECTS} redirects`);
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
      case "lost":
        if (lost >= MAX_CONNECTION_LOST_RETRIES) return { kind: "failed", result: attempt.result };
        lost++;
        continue;
      case "busy": {
        if (busy >= MAX_BUSY_RETRIES) {
          return failure(`GET ${url}: HTTP 503 (busy) ${busy + 1} times`);
        }
        busy++;
        const waitStarted = Date.now();
        const waited = await wait(attempt.retryAfterMs, get.signal);
        get.pace.waitedMs += Date.now() - waitStarted;
        if (!waited) return { kind: "failed", result: abortedResult() };
        continue;
      }
    }
  }
}

function failure(message: string): ArtifactAnswer {
  return { kind: "failed", result: { ok: false, code: "download_failed", message } };
}

/** `tls` without its client certificate and key (for an origin they must not reach). */
function tlsWithoutIdentity(tls: DownloadTls): DownloadTls | undefined {
  return tls.ca === undefined ? undefined : { ca: tls.ca };
}

/** Sleeps `ms`; false when `signal` aborted first. */
export function wait(ms: number, signal: AbortSignal): Promise<boolean> {
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

function originRefused(url: string, why: string): ArtifactAnswer {
  const message = `GET ${url} refused: ${why}`;
  return { kind: "failed", result: { ok: false, code: "artifact_origin_refused", message } };
}

/** The result of a download its caller stopped waiting for. */
export function abortedResult(): DownloadFailed {
  return { ok: false, code: "download_failed", message: "download aborted" };
}
