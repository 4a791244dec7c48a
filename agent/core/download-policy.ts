/**
 * What a download may take and what it comes to: the policy against slow retrieval, and the
 * result an Agent reports (a verified-size body with its digest, or a failure code).
 */

/** Why a download failed; the codes agents report in FAILED. */
export type DownloadFailure =
  | "download_failed"
  | "artifact_too_large"
  | "download_too_slow"
  | "artifact_origin_refused";

/**
 * How long a download may take. A server that keeps a download alive with a trickle (TUF's
 * slow-retrieval attack) is cut off: after `graceMs` the average rate since the start must
 * stay at or above `minBytesPerSecond`, and the whole download must end by its deadline,
 * `graceMs` plus the signed size at the minimum rate ({@link downloadDeadlineMs}). A download
 * that resumes is judged as one, over all its requests.
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
