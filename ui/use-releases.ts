/**
 * Every registered release (ListReleases, page after page), read when shown and again every
 * `intervalMs`, so a release registered or yanked meanwhile appears without a reload.
 */
import type { Release } from "../proto/gen/agentcontrol/admin/v1/release_pb.js";
import type { Api } from "./api.js";
import { type Polled, usePoll } from "./use-poll.js";

/** The releases Control has registered, yanked ones included. */
export function useReleases(api: Api, intervalMs = 15_000): Polled<readonly Release[]> {
  return usePoll(
    async (signal) => {
      const all: Release[] = [];
      let pageToken = "";
      do {
        const page = await api.releases.listReleases({ pageSize: 1000, pageToken }, { signal });
        all.push(...page.releases);
        pageToken = page.nextPageToken;
      } while (pageToken !== "");
      return all;
    },
    [api],
    intervalMs,
  );
}
