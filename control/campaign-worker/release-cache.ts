/**
 * The signed releases a leader offers, loaded from the store once per version and kept for the
 * life of the worker (a registered release's signed metadata never changes; a yank is read
 * separately, at every decision).
 */
import type { CampaignStore, OfferRelease } from "../campaign-store/index.js";

/** Loads a release by version, from memory after its first successful load. */
export function releaseCache(
  store: Pick<CampaignStore, "offerRelease">,
): (version: string) => Promise<OfferRelease | undefined> {
  const releases = new Map<string, OfferRelease>();
  return async (version) => {
    const cached = releases.get(version);
    if (cached) return cached;
    const loaded = await store.offerRelease(version);
    if (loaded) releases.set(version, loaded);
    return loaded;
  };
}
