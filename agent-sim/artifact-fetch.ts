/**
 * How a simulated agent fetches a release's artifact, as its fleet is set up: not at all when
 * the fleet does not download (`--no-download`: the operation's size and sha256 are trusted),
 * else with its node token where the artifact's origin is trusted, through the fleet's shared
 * cache or, when the fleet shares no downloads, by itself.
 */
import {
  type DownloadResult,
  downloadAuthorization,
  fetchArtifact,
} from "../agent/core/download.js";
import type { ArtifactRequest } from "../agent/core/operations.js";
import type { AgentRuntime } from "./runtime.js";

/** The fetch of `artifact` for an agent holding `nodeToken`, or undefined when none is made. */
export function fetchArtifactFor(
  runtime: Pick<AgentRuntime, "settings" | "artifacts">,
  artifact: ArtifactRequest,
  nodeToken: string | undefined,
  signal: AbortSignal,
): Promise<DownloadResult> | undefined {
  const { settings } = runtime;
  if (!settings.download) return undefined;
  const authorization = downloadAuthorization(artifact.url, settings.trustedOrigins, nodeToken);
  if (!settings.shareDownloads) {
    return fetchArtifact(
      artifact.url,
      artifact.size,
      settings.downloadPolicy,
      signal,
      authorization,
    );
  }
  return runtime.artifacts.get({ ...artifact, authorization }, signal);
}
