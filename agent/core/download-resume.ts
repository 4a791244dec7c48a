/**
 * A download that goes on where it stopped: a body cut short (a poor link, a reset, a stall)
 * is continued with `Range: bytes=N-` and `If-Range`, from the bytes kept so far
 * (download-partial.ts: in memory, or in the Agent's download area on disk, where they
 * outlive a restart). The origin decides what is continued:
 * - 206 with exactly the asked `Content-Range`: the bytes are appended;
 * - 200 (the origin ignores ranges, or the file changed and `If-Range` no longer matches):
 *   the kept bytes are dropped and the answer starts them over;
 * - 416, or a 206 of another range: the kept bytes are dropped and the next GET asks from 0
 *   (at most {@link MAX_START_OVERS} times).
 * Once every byte is there the sha256 is computed over the whole artifact, re-read from its
 * start; when it is wrong and the bytes came from more than one answer, they are dropped and
 * the download starts over (a bad piece), within the same bound. A wrong digest from a single
 * answer is returned as it is, for the caller to report (`sha256_mismatch`).
 * Cuts are retried after the Agent's backoff, at most {@link MAX_FRUITLESS_RESUMES} in a row
 * that kept nothing new; the policy's deadline and minimum rate hold over the whole download.
 */
import { sha256Hex } from "../../control/shared/release/digest.js";
import { type BackoffOptions, backoffDelay, DEFAULT_BACKOFF } from "./backoff.js";
import {
  abortedResult,
  type DownloadPolicy,
  type DownloadResult,
  type DownloadTls,
  type OriginCheck,
  requestArtifact,
  wait,
} from "./download.js";
import { type DownloadFailed, startPace, tooSlow, type Validator } from "./download-attempt.js";
import { memoryPartial, openPartialFile, type PartialDownload } from "./download-partial.js";

/** Cuts in a row that kept no new byte before a download fails with the last one's reason. */
export const MAX_FRUITLESS_RESUMES = 5;
/** Times a download drops its kept bytes (416, a wrong range, a wrong sha256) and goes on. */
export const MAX_START_OVERS = 2;

/** What a resumable download fetches, and how. */
export interface ResumableDownload {
  readonly url: string;
  /** The signed size: more bytes fail `artifact_too_large`. */
  readonly size: number;
  /**
   * The signed sha256 (lower-case hex). Without it nothing is kept on disk and a wrong
   * digest is not retried: the caller judges the bytes.
   */
  readonly sha256?: string | undefined;
  readonly policy: DownloadPolicy;
  readonly authorization?: string | undefined;
  readonly allowed?: OriginCheck | undefined;
  readonly tls?: DownloadTls | undefined;
  /** The download area kept bytes live in (download-partial.ts); undefined: in memory. */
  readonly partialDir?: string | undefined;
  /** Delays between cuts (default: the Agent's reconnect backoff). */
  readonly backoff?: BackoffOptions | undefined;
  readonly random?: (() => number) | undefined;
}

/**
 * Downloads `request.url` as the file's TSDoc says; the result is the whole artifact with
 * its sha256, or the failure of `fetchArtifact`'s codes. Kept bytes stay in the download
 * area when it fails or `signal` aborts it, and are removed once the artifact is returned.
 */
export async function downloadResumable(
  request: ResumableDownload,
  signal: AbortSignal,
): Promise<DownloadResult> {
  const refused = request.allowed?.(request.url);
  if (refused !== undefined) {
    const message = `GET ${request.url} refused: ${refused}`;
    return { ok: false, code: "artifact_origin_refused", message };
  }
  const { partialDir, sha256 } = request;
  try {
    if (partialDir === undefined || sha256 === undefined) {
      return await resume(request, memoryPartial(), signal);
    }
    return await exclusively(partialDir, async () =>
      resume(request, await openPartialFile(partialDir, sha256, request.size), signal),
    );
  } catch (error) {
    // The download area failed (unwritable, full): no retry mends that.
    const where = partialDir === undefined ? "memory" : `the download area ${partialDir}`;
    return failed(`GET ${request.url}: could not keep the download in ${where}: ${String(error)}`);
  }
}

async function resume(
  request: ResumableDownload,
  partial: PartialDownload,
  signal: AbortSignal,
): Promise<DownloadResult> {
  const { url, size, policy } = request;
  const pace = startPace();
  let fruitless = 0;
  let startOvers = 0;
  let answered = false;
  try {
    for (;;) {
      if (partial.length === size && (size > 0 || answered)) {
        const bytes = await partial.read();
        const digest = sha256Hex(bytes);
        if (request.sha256 === undefined || digest === request.sha256) {
          await partial.discard();
          return { ok: true, artifact: { bytes, sha256: digest } };
        }
        const assembled = partial.pieces > 1;
        await partial.reset();
        if (!assembled || startOvers >= MAX_START_OVERS) {
          return { ok: true, artifact: { bytes, sha256: digest } };
        }
        startOvers += 1;
        continue;
      }
      const slow = tooSlow(pace, size, policy);
      if (slow !== undefined) {
        return { ok: false, code: "download_too_slow", message: `GET ${url}: ${slow}` };
      }
      const before = partial.length;
      const source = partial.source;
      const answer = await requestArtifact(
        url,
        {
          size,
          policy,
          signal,
          authorization: request.authorization,
          allowed: request.allowed,
          tls: request.tls,
          from: before,
          ifRange: before > 0 && source?.url === url ? ifRangeOf(source.validator) : undefined,
          pace,
        },
        partial.sink(url),
      );
      answered = true;
      await partial.sync();
      if (answer.kind === "failed") return answer.result;
      if (answer.kind === "unsatisfiable") {
        if (startOvers >= MAX_START_OVERS) return failed(answer.reason);
        startOvers += 1;
        await partial.reset();
        continue;
      }
      if (answer.cut === undefined && partial.length === size) continue;
      const cut: DownloadFailed = answer.cut ?? failed(`GET ${url}: body ended early`);
      fruitless = partial.length > before ? 0 : fruitless + 1;
      if (fruitless > MAX_FRUITLESS_RESUMES) return cut;
      const delay = backoffDelay(fruitless, request.backoff ?? DEFAULT_BACKOFF, request.random);
      if (!(await wait(delay, signal))) return abortedResult();
    }
  } finally {
    await partial.close();
  }
}

/** The `If-Range` of kept bytes: their strong ETag, else their Last-Modified, else none. */
function ifRangeOf(validator: Validator): string | undefined {
  return validator.etag ?? validator.lastModified;
}

function failed(message: string): DownloadFailed {
  return { ok: false, code: "download_failed", message };
}

/** One download at a time per download area (its files are one artifact's). */
const areas = new Map<string, Promise<unknown>>();

async function exclusively<T>(dir: string, work: () => Promise<T>): Promise<T> {
  const before = areas.get(dir) ?? Promise.resolve();
  const mine = before.catch(() => {}).then(work);
  areas.set(dir, mine);
  try {
    return await mine;
  } finally {
    if (areas.get(dir) === mine) areas.delete(dir);
  }
}
