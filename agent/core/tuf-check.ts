/**
 * The Agent's TUF client: before an upgrade is accepted, tuf-js refreshes the release
 * channel's metadata from Control (root rotations followed, then timestamp, snapshot and
 * targets, each verified against the trusted root's keys and thresholds, versions never
 * going back, nothing expired), and the release must be listed there as
 * `agent/<version>/<platform>` with the operation's length, sha256, version and sequence.
 * The trusted metadata lives in the install directory (`tuf/`), starting from the root.json
 * given at install. An expired timestamp (or snapshot, targets, root) is a freeze: the
 * release is refused `metadata_expired`. tuf-js rewrites root.json in place, so a durable copy
 * of the last trusted root (`root.trusted.json`) restores it when a crash tore the file.
 */
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import { MetadataKind } from "@tufjs/models";
import { BaseFetcher, Updater } from "tuf-js";
// tuf-js tells "no newer root" from a 404 by this class and an expired role by the other;
// its index exports neither.
import { DownloadHTTPError, ExpiredMetadataError } from "tuf-js/dist/error.js";
import { parseMetadata, releaseTargetPath } from "../../control/shared/tuf/repository.js";
import { writeFileDurably } from "./durable-state.js";
import type { AcceptedUpgrade } from "./release-check.js";

/** Why TUF refused a release. */
export type TufRefusal = "untrusted_release" | "metadata_expired" | "metadata_unavailable";

/** The verdict of the TUF check. */
export type TufVerdict = { ok: true } | { ok: false; code: TufRefusal; message: string };

/** What decides whether current TUF metadata lists a release (a port for the core). */
export interface TufCheck {
  /** Refreshes the metadata and checks `upgrade`'s artifact for `platform`. Never throws. */
  check(upgrade: AcceptedUpgrade, platform: string): Promise<TufVerdict>;
  /**
   * Refreshes the metadata only (the same refresh `check` starts with): `metadata_expired`
   * when the Agent is frozen, which includes any failed refresh while the newest copy it
   * trusts of any role (timestamp, snapshot, targets, root) has expired. Never throws.
   */
  refresh(): Promise<TufVerdict>;
}

/** Where the metadata comes from and is kept. */
export interface TufClientOptions {
  /** Directory of the trusted metadata (must hold root.json). */
  readonly metadataDir: string;
  /** Base URL of the repository's metadata (Control's `/tuf/`). */
  readonly metadataBaseUrl: string;
  /** Each metadata request ends after this long (default 30 s). */
  readonly fetchTimeoutMs?: number;
}

/** Fetches metadata with Node's fetch: bounded in time, no redirects, no credentials. */
class BoundedFetcher extends BaseFetcher {
  constructor(private readonly timeoutMs: number) {
    super();
  }

  override async fetch(url: string): Promise<NodeJS.ReadableStream> {
    const response = await fetch(url, {
      redirect: "error",
      signal: AbortSignal.timeout(this.timeoutMs),
    });
    if (!response.ok || response.body === null) {
      await response.body?.cancel();
      throw new DownloadHTTPError(`GET ${url}: HTTP ${response.status}`, response.status);
    }
    return Readable.fromWeb(response.body as import("node:stream/web").ReadableStream);
  }
}

/**
 * The TUF check of a real Agent, over tuf-js. Calls run one at a time (a periodic refresh
 * never writes the metadata directory while an upgrade's check does).
 */
export function tufClient(options: TufClientOptions): TufCheck {
  const base = options.metadataBaseUrl.endsWith("/")
    ? options.metadataBaseUrl
    : `${options.metadataBaseUrl}/`;
  const fetcher = new BoundedFetcher(options.fetchTimeoutMs ?? 30_000);
  let queue: Promise<unknown> = Promise.resolve();
  const serial = (work: () => Promise<TufVerdict>): Promise<TufVerdict> => {
    const next = queue.then(work, work);
    queue = next;
    return next;
  };

  /**
   * Refreshes the trusted metadata; then `inspect` judges it. A refresh that fails while the
   * newest trusted copy of any role has expired is a freeze (`metadata_expired`), whatever the
   * server answered. Never throws.
   */
  async function refreshed(
    inspect: (updater: Updater) => Promise<TufVerdict>,
  ): Promise<TufVerdict> {
    try {
      await mkdir(options.metadataDir, { recursive: true });
      await restoreRoot(options.metadataDir);
      const updater = new Updater({
        metadataDir: options.metadataDir,
        metadataBaseUrl: base,
        fetcher,
        config: { rootMaxLength: 512 * 1024, targetsMaxLength: 8 * 1024 * 1024 },
      });
      await updater.refresh();
      return await inspect(updater);
    } catch (error) {
      const verdict = classify(error);
      if (!verdict.ok && verdict.code !== "metadata_expired") {
        return (await expiredTrusted(options.metadataDir, verdict.message)) ?? verdict;
      }
      return verdict;
    } finally {
      await keepRoot(options.metadataDir).catch(() => {});
    }
  }

  return {
    check: (upgrade, platform) =>
      serial(() =>
        refreshed(async (updater) => {
          const path = releaseTargetPath(upgrade.version, platform);
          const target = await updater.getTargetInfo(path);
          if (target === undefined) {
            return refuse("untrusted_release", `the TUF targets do not list ${path}`);
          }
          const { artifact, version, sequence } = upgrade;
          const custom = target.custom;
          if (
            target.length !== artifact.size ||
            target.hashes.sha256 !== artifact.sha256 ||
            custom.version !== version ||
            String(custom.sequence) !== sequence.toString()
          ) {
            return refuse(
              "untrusted_release",
              `the TUF targets list ${path} as ${target.hashes.sha256 ?? "no sha256"}, ${target.length} bytes, version ${String(custom.version)} #${String(custom.sequence)}; the release is ${artifact.sha256}, ${artifact.size} bytes, ${version} #${sequence}`,
            );
          }
          return { ok: true };
        }),
      ),
    refresh: () => serial(() => refreshed(async () => ({ ok: true }))),
  };
}

/** The durable copy of the last trusted root (tuf-js writes root.json in place). */
const KEPT_ROOT = "root.trusted.json";

function parsesAsRoot(bytes: Uint8Array): boolean {
  try {
    parseMetadata(MetadataKind.Root, bytes);
    return true;
  } catch {
    return false;
  }
}

/** Puts the kept root back when root.json is missing or torn (a crash during its write). */
async function restoreRoot(dir: string): Promise<void> {
  const current = await readFile(join(dir, "root.json")).catch(() => undefined);
  if (current !== undefined && parsesAsRoot(current)) return;
  const kept = await readFile(join(dir, KEPT_ROOT)).catch(() => undefined);
  if (kept !== undefined && parsesAsRoot(kept))
    await writeFileDurably(join(dir, "root.json"), kept);
}

/** Copies root.json (tuf-js only persists a root it verified) durably, when it changed. */
async function keepRoot(dir: string): Promise<void> {
  const current = await readFile(join(dir, "root.json"));
  if (!parsesAsRoot(current)) return;
  const kept = await readFile(join(dir, KEPT_ROOT)).catch(() => undefined);
  if (kept === undefined || !kept.equals(current)) {
    await writeFileDurably(join(dir, KEPT_ROOT), current);
  }
}

/** The roles whose trusted copy a failed refresh reads for expiry, in the order named. */
const TRUSTED_ROLES = [
  MetadataKind.Timestamp,
  MetadataKind.Snapshot,
  MetadataKind.Targets,
  MetadataKind.Root,
] as const;

/**
 * A freeze by withholding: no newer metadata could be fetched and the newest copy this agent
 * trusts of some role (timestamp, snapshot, targets or root) has expired, so it is frozen
 * exactly as when it is served a stale one. Checking the timestamp alone would let a server
 * that answers with junk clear the freeze of expired targets behind a current timestamp.
 */
async function expiredTrusted(dir: string, why: string): Promise<TufVerdict | undefined> {
  const now = new Date();
  for (const role of TRUSTED_ROLES) {
    const bytes = await readFile(join(dir, `${role}.json`)).catch(() => undefined);
    if (bytes === undefined) continue;
    let expires: string;
    try {
      const trusted = parseMetadata(role, bytes);
      if (!trusted.signed.isExpired(now)) continue;
      expires = trusted.signed.expires;
    } catch {
      continue;
    }
    return refuse(
      "metadata_expired",
      `TUF metadata expired (a freeze): the newest trusted ${role} expired at ${expires} and no newer one could be fetched (${why})`,
    );
  }
  return undefined;
}

/**
 * The verdict of a failed refresh. Only tuf-js's own expiry error is a freeze: a message can
 * quote the bytes the server sent (a parse error names what it found), so no message text
 * decides it.
 */
function classify(error: unknown): TufVerdict {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof ExpiredMetadataError) {
    return refuse("metadata_expired", `TUF metadata expired (a freeze): ${message}`);
  }
  if (error instanceof DownloadHTTPError || /fetch failed|ECONNREFUSED|aborted/i.test(message)) {
    return refuse("metadata_unavailable", `TUF metadata could not be fetched: ${message}`);
  }
  return refuse("untrusted_release", `TUF metadata refused: ${message}`);
}

function refuse(code: TufRefusal, message: string): TufVerdict {
  return { ok: false, code, message };
}
