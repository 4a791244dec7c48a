/**
 * The platforms an Agent release may carry an artifact for, as `<os>-<arch>` with Go's
 * GOOS/GOARCH names (`armv7` is GOARCH=arm with GOARM=7). A manifest naming any other
 * platform is refused with `unknown_platform`, so a typo never silently ships nothing.
 */
export const KNOWN_PLATFORMS: readonly string[] = Object.freeze([
  "linux-amd64",
  "linux-arm64",
  "linux-armv7",
  "linux-386",
  "darwin-amd64",
  "darwin-arm64",
  "windows-amd64",
]);

/** True when `platform` is one of {@link KNOWN_PLATFORMS} (exact, case-sensitive). */
export function isKnownPlatform(platform: string): boolean {
  return KNOWN_PLATFORMS.includes(platform);
}
