/**
 * Per-process artifact cache: ten thousand simulated agents of one process share one download
 * per sha256 instead of fetching the same URL at once. A shared download resumes after a cut
 * as the Agent's does, its bytes kept in memory (download-resume.ts).
 */
import {
  abortedResult,
  type DownloadPolicy,
  type DownloadRequest,
  type DownloadResult,
  type FetchedArtifact,
} from "./download.js";
import { downloadResumable } from "./download-resume.js";

/**
 * Per-process artifact cache keyed by expected sha256. Concurrent requests for the same
 * artifact share one download; only a body whose digest and size matched is kept, so a
 * failed or tampered download is retried by the next agent that asks. Callers still
 * compare the returned bytes' size and digest with what they were told to expect.
 */
export class ArtifactCache {
  readonly #verified = new Map<string, FetchedArtifact>();
  readonly #inflight = new Map<string, Promise<DownloadResult>>();
  readonly #policy: DownloadPolicy;
  readonly #signal: AbortSignal;
  /** Downloads actually started (for tests and stats). */
  downloads = 0;

  /**
   * @param policy the stall timeout, deadline and minimum rate of every download.
   * @param signal aborts every shared download (the fleet's lifetime).
   */
  constructor(policy: DownloadPolicy, signal: AbortSignal) {
    this.#policy = policy;
    this.#signal = signal;
  }

  /** The artifact for `request`, downloaded or shared. `signal` cancels only the caller's wait. */
  async get(request: DownloadRequest, signal: AbortSignal): Promise<DownloadResult> {
    const cached = this.#verified.get(request.sha256);
    if (cached !== undefined) return { ok: true, artifact: cached };
    const key = `${request.sha256} ${request.size} ${request.url}`;
    let pending = this.#inflight.get(key);
    if (pending === undefined) {
      this.downloads++;
      pending = downloadResumable(
        {
          url: request.url,
          size: request.size,
          sha256: request.sha256,
          policy: this.#policy,
          authorization: request.authorization,
        },
        this.#signal,
      );
      this.#inflight.set(key, pending);
      void pending.then((result) => {
        this.#inflight.delete(key);
        if (
          result.ok &&
          result.artifact.sha256 === request.sha256 &&
          result.artifact.bytes.byteLength === request.size
        ) {
          this.#verified.set(request.sha256, result.artifact);
        }
      });
    }
    return raceAbort(pending, signal);
  }
}

function raceAbort(pending: Promise<DownloadResult>, signal: AbortSignal): Promise<DownloadResult> {
  if (signal.aborted) return Promise.resolve(abortedResult());
  return new Promise((resolve) => {
    const onAbort = () => resolve(abortedResult());
    signal.addEventListener("abort", onAbort, { once: true });
    void pending.then((result) => {
      signal.removeEventListener("abort", onAbort);
      resolve(result);
    });
  });
}
