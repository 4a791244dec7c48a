/**
 * The registered releases as the dashboard uses them: the versions a campaign may be started
 * on (registered and not yanked: Control refuses a yanked one, `release_yanked`) and the
 * yanked versions the fleet page marks. Pure, and free of the DOM, so it is tested in Node.
 */
import type { Release } from "../proto/gen/agentcontrol/admin/v1/release_pb.js";

/** True once an operator yanked `release`. */
export const isYanked = (release: Release): boolean => release.yankedAt !== undefined;

/** The versions a campaign may target: the releases not yanked, the highest sequence first. */
export function startableVersions(releases: readonly Release[]): string[] {
  return releases
    .filter((r) => !isYanked(r))
    .sort((a, b) => (a.sequence === b.sequence ? 0 : a.sequence > b.sequence ? -1 : 1))
    .map((r) => r.version);
}

/** The versions of the yanked releases. */
export function yankedVersions(releases: readonly Release[]): ReadonlySet<string> {
  return new Set(releases.filter(isYanked).map((r) => r.version));
}
