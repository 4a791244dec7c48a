/**
 * Which registered releases `agentctl release prune` frees the artifact bytes of: a pure
 * rule over the registry and what is in use. Kept are every release in use (a node runs it or
 * may roll back to it, a live campaign, a desired version or a running plan names it) and the
 * newest `keep` releases that are not yanked; the others go, yanked ones first, then oldest
 * first. Only releases with bytes stored in Control are considered (one pruned already, or
 * whose artifacts are served from a URL, has nothing to free).
 */

/** A registered release as the rule reads it. */
export interface PruneRelease {
  readonly version: string;
  readonly sequence: number;
  readonly yanked: boolean;
  /** Control stores bytes of at least one of its artifacts. */
  readonly stored: boolean;
}

/** What {@link planPrune} reads. */
export interface PruneInput {
  readonly releases: readonly PruneRelease[];
  /** Versions in use, each with why (`a node runs it`, …). */
  readonly inUse: ReadonlyMap<string, string>;
  /** How many of the newest releases that are not yanked to keep. */
  readonly keep: number;
}

/** A release kept, and why. */
export interface KeptRelease {
  readonly version: string;
  readonly reason: string;
}

/** What a prune frees and keeps. */
export interface PrunePlan {
  /** The releases whose artifact bytes go: yanked first, then by sequence, oldest first. */
  readonly prune: readonly PruneRelease[];
  /** The releases with stored bytes that stay, newest first. */
  readonly kept: readonly KeptRelease[];
}

/** Decides a prune; see the file's comment. */
export function planPrune(input: PruneInput): PrunePlan {
  const stored = input.releases.filter((r) => r.stored);
  const newestFirst = [...stored].sort((a, b) => b.sequence - a.sequence);
  const newest = new Set(
    newestFirst
      .filter((r) => !r.yanked)
      .slice(0, Math.max(0, input.keep))
      .map((r) => r.version),
  );
  const kept: KeptRelease[] = [];
  const prune: PruneRelease[] = [];
  for (const r of newestFirst) {
    const use = input.inUse.get(r.version);
    if (newest.has(r.version))
      kept.push({ version: r.version, reason: `one of the newest ${input.keep}` });
    else if (use !== undefined) kept.push({ version: r.version, reason: use });
    else prune.push(r);
  }
  prune.sort((a, b) => (a.yanked !== b.yanked ? (a.yanked ? -1 : 1) : a.sequence - b.sequence));
  return { prune, kept };
}
