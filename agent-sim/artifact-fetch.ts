/**
 * How a simulated agent fetches a release's artifact, as its fleet is set up: not at all when
 * the fleet does not download (`--no-download`: the operation's size and sha256 are trusted),
 * else with its node token where the artifact's origin is trusted, through the fleet's shared
 * cache or, when the fleet shares no downloads, by itself; either resumes a cut download from
 * the bytes it kept in memory, as the Agent does from its download area.
 */
import { type DownloadResult, downloadAuthorization } from "../agent/core/download.js";
import { downloadResumable } from "../agent/core/download-resume.js";
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
    return downloadResumable(
      {
        url: artifact.url,
        size: artifact.size,
        sha256: artifact.sha256,
        policy: settings.downloadPolicy,
        authorization,
      },
      signal,
    );
  }
  return runtime.artifacts.get({ ...artifact, authorization }, signal);
}
