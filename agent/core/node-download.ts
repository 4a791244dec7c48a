/**
 * How the real Agent downloads an artifact as its node: only from an origin it trusts for
 * artifacts, with its node token and its client certificate (mTLS) only where they may go
 * (its stream's origin and `--download-origins`; the certificate over https only), trusting
 * its stream's CA for every https download.
 */
import {
  type ArtifactOrigins,
  artifactOriginRefusal,
  type DownloadPolicy,
  type DownloadResult,
  type DownloadTls,
  downloadAuthorization,
  downloadTls,
  fetchArtifact,
} from "./download.js";

/** What a node downloads with; see the file's TSDoc. */
export interface NodeDownloadOptions {
  /** The only origins the node token and the client certificate go to (`trustedOrigins`). */
  readonly trustedOrigins: readonly string[];
  /** The only origins artifacts are fetched from (`artifactOrigins`); others are refused. */
  readonly artifactOrigins: ArtifactOrigins;
  readonly policy: DownloadPolicy;
  readonly nodeToken: string | undefined;
  /** The stream's TLS: its CA, and its client certificate and key (mTLS); undefined: none. */
  readonly tls: DownloadTls | undefined;
}

/**
 * Downloads `artifact` (at most its `size` bytes) as the node; see the file's TSDoc and
 * `fetchArtifact` for every limit and refusal.
 */
export function downloadAsNode(
  artifact: { readonly url: string; readonly size: number },
  options: NodeDownloadOptions,
  signal: AbortSignal,
): Promise<DownloadResult> {
  return fetchArtifact(
    artifact.url,
    artifact.size,
    options.policy,
    signal,
    downloadAuthorization(artifact.url, options.trustedOrigins, options.nodeToken),
    (url) => artifactOriginRefusal(url, options.artifactOrigins),
    downloadTls(artifact.url, options.trustedOrigins, options.tls),
  );
}
