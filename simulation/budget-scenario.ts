/**
 * The campaign-wide limits a seeded scenario exercises: a failure budget (`maxFailures`), a
 * minimum sample (`minCanaries`) and a download budget (`maxDownloads`) on a share of its campaigns, and — outside calm scenarios,
 * whose outcome must not depend on timing — a yank of the target release at a seeded time.
 * A seed stream of its own, so the rest of a scenario is drawn as before.
 */
import { createPrng, deriveSeed, type Prng } from "../agent-sim/prng.js";
import type { CampaignSpecInput } from "../control/campaign/index.js";

/** An operator's yank of a release at a virtual time. */
export interface YankPlan {
  readonly at: number;
  readonly version: string;
  readonly reason: string;
}

const MIN = 60_000;

const int = (prng: Prng, lo: number, hi: number) => lo + Math.floor(prng.next() * (hi - lo + 1));

/** `spec` of the `index`-th campaign of `seed`, with a failure budget and a minimum sample or not. */
export function withLimits(
  seed: number,
  index: number,
  spec: CampaignSpecInput,
): CampaignSpecInput {
  const prng = createPrng(deriveSeed(deriveSeed(seed, 21), index));
  const roll = prng.next();
  const budget =
    roll < 0.2
      ? { maxFailures: { kind: "count" as const, count: int(prng, 0, 3) } }
      : roll < 0.35
        ? { maxFailures: { kind: "percent" as const, percent: int(prng, 0, 20) } }
        : {};
  const sample = prng.next() < 0.3 ? { minCanaries: int(prng, 1, 4) } : {};
  // The download budget draws from a stream of its own, so the draws above stay as they were.
  const downloads = createPrng(deriveSeed(deriveSeed(seed, 23), index));
  const maxDownloads = downloads.next() < 0.3 ? { maxDownloads: int(downloads, 1, 3) } : {};
  return { ...spec, ...budget, ...sample, ...maxDownloads };
}

/** The yanks of `seed`'s scenario: none when calm, else one of `version` in a share of seeds. */
export function yanksOf(seed: number, calm: boolean, version: string): YankPlan[] {
  if (calm) return [];
  const prng = createPrng(deriveSeed(seed, 22));
  if (prng.next() >= 0.2) return [];
  return [{ at: int(prng, 1, 40) * MIN, version, reason: "found bad in the field" }];
}
