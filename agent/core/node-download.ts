/**
 * How the real Agent downloads an artifact as its node: only from an origin it trusts for
 * artifacts, with its node token and its client certificate (mTLS) only where they may go
 * (its stream's origin and `--download-origins`; the certificate over https only), trusting
 * its stream's CA for every https download; resuming a cut download from the bytes kept in
 * its download area (download-resume.ts), across restarts.
 */
import {
  type ArtifactOrigins,
  artifactOriginRefusal,
  type DownloadPolicy,
  type DownloadResult,
  type DownloadTls,
  downloadAuthorization,
  downloadTls,
} from "./download.js";
import { downloadResumable } from "./download-resume.js";

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
  /**
   * The download area (`<install dir>/downloads`) where a download's bytes are kept until the
   * artifact is whole and verified; undefined: kept in memory (a restart starts over).
   */
  readonly partialDir?: string | undefined;
}

/**
 * Downloads `artifact` (at most its `size` bytes) as the node, resuming after cuts; see the
 * file's TSDoc, `downloadResumable` and `fetchArtifact` for every limit and refusal. With its
 * `sha256`, the kept bytes are the artifact's in the download area and a wrong digest over
 * bytes assembled from several answers is downloaded again from the start.
 */
export function downloadAsNode(
  artifact: { readonly url: string; readonly size: number; readonly sha256?: string },
  options: NodeDownloadOptions,
  signal: AbortSignal,
): Promise<DownloadResult> {
  return downloadResumable(
    {
      url: artifact.url,
      size: artifact.size,
      sha256: artifact.sha256,
      policy: options.policy,
      authorization: downloadAuthorization(artifact.url, options.trustedOrigins, options.nodeToken),
      allowed: (url) => artifactOriginRefusal(url, options.artifactOrigins),
      tls: downloadTls(artifact.url, options.trustedOrigins, options.tls),
      partialDir: options.partialDir,
    },
    signal,
  );
}
