/**
 * Where an Agent's node token may go: the origins (scheme, host and port) it was configured
 * with, never one an artifact URL names; and where it may fetch artifacts from at all.
 */

/**
 * The origins (scheme, host and port, as `URL.origin` writes them) an agent may send its
 * node token to: Control's stream endpoint (`https` with TLS, `http` without) and the
 * download origins it was configured with. Nothing an operation says adds to them.
 */
export function trustedOrigins(
  server: string,
  tls: boolean,
  downloadOrigins: readonly string[],
): string[] {
  const origins = new Set<string>();
  try {
    origins.add(new URL(`${tls ? "https" : "http"}://${server}`).origin);
  } catch {
    // an unparsable server trusts no origin of its own
  }
  for (const origin of downloadOrigins) origins.add(new URL(origin).origin);
  return [...origins];
}

/**
 * The `Authorization` header an agent sends with a download: its node token, only when
 * `url` has exactly one of `origins` (same scheme, host and port; see
 * {@link trustedOrigins}) and names no user information. Never for another port or scheme
 * on Control's host, nor for a host an artifact URL names.
 */
export function downloadAuthorization(
  url: string,
  origins: readonly string[],
  nodeToken: string | undefined,
): string | undefined {
  if (nodeToken === undefined) return undefined;
  try {
    const target = new URL(url);
    if (target.username !== "" || target.password !== "") return undefined;
    return origins.includes(target.origin) ? `Bearer ${nodeToken}` : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The TLS of one https download: the CA that verifies the server (the stream's `--ca`, beside
 * the system's roots) and, only for an origin the node token may go to, the node's client
 * certificate and key (its mTLS identity on the stream).
 */
export interface DownloadTls {
  readonly ca?: Uint8Array | undefined;
  readonly cert?: Uint8Array | undefined;
  readonly key?: Uint8Array | undefined;
}

/**
 * The TLS a download of `url` uses, from the stream's (`stream`): undefined for a URL that is
 * not https or names user information, or when the stream has neither a CA nor a client
 * certificate. The client certificate and key go only to exactly one of `origins` (see
 * {@link trustedOrigins}; the rule of {@link downloadAuthorization}), never to a mirror,
 * another port or scheme, or a host an artifact URL names; the CA verifies every https origin.
 */
export function downloadTls(
  url: string,
  origins: readonly string[],
  stream: DownloadTls | undefined,
): DownloadTls | undefined {
  if (stream === undefined) return undefined;
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return undefined;
  }
  if (target.protocol !== "https:" || target.username !== "" || target.password !== "") {
    return undefined;
  }
  const identity =
    stream.cert !== undefined && stream.key !== undefined && origins.includes(target.origin)
      ? { cert: stream.cert, key: stream.key }
      : {};
  const tls: DownloadTls = { ...(stream.ca === undefined ? {} : { ca: stream.ca }), ...identity };
  return Object.keys(tls).length === 0 ? undefined : tls;
}

/**
 * Where an agent may fetch artifacts from: exact origins (scheme, host and port), and, when
 * none was configured, its Control's own host name on any port (Control's downloads listen
 * on a port of their own beside the stream's).
 */
export interface ArtifactOrigins {
  readonly origins: readonly string[];
  /** The stream's host name, trusted on any port; absent once origins are configured. */
  readonly controlHost?: string;
}

/** What {@link artifactOrigins} builds the trusted artifact origins from. */
export interface ArtifactOriginsOptions {
  /** Control's stream endpoint, HOST:PORT. */
  readonly server: string;
  readonly tls: boolean;
  /** `--download-origins`: Control's downloads (they also receive the node token). */
  readonly downloadOrigins: readonly string[];
  /** `--artifact-mirrors`: origins artifacts may also come from (never given the token). */
  readonly mirrors: readonly string[];
  /** `--tuf-url`: Control serves the TUF targets beside this metadata. */
  readonly tufUrl?: string | undefined;
}

/**
 * The origins an agent fetches artifacts from: the stream's own, its configured download
 * origins and mirrors and its TUF metadata's origin; with neither download origins nor
 * mirrors configured, also any port of the stream's host. Nothing an operation says adds to
 * them.
 */
export function artifactOrigins(options: ArtifactOriginsOptions): ArtifactOrigins {
  const origins = new Set(trustedOrigins(options.server, options.tls, options.downloadOrigins));
  for (const mirror of options.mirrors) origins.add(new URL(mirror).origin);
  if (options.tufUrl !== undefined) {
    try {
      origins.add(new URL(options.tufUrl).origin);
    } catch {
      // an unparsable TUF URL adds nothing (the command line refuses one)
    }
  }
  const configured = options.downloadOrigins.length > 0 || options.mirrors.length > 0;
  let controlHost: string | undefined;
  if (!configured) {
    try {
      controlHost = new URL(`http://${options.server}`).hostname;
    } catch {
      controlHost = undefined;
    }
  }
  return { origins: [...origins], ...(controlHost === undefined ? {} : { controlHost }) };
}

/**
 * Why the agent must not fetch `url` (its origin is not one it trusts, see
 * {@link artifactOrigins}; not http(s); it names user information), or undefined when it
 * may. Decided from the URL alone, before any request.
 */
export function artifactOriginRefusal(url: string, trusted: ArtifactOrigins): string | undefined {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return `the artifact URL ${JSON.stringify(url)} is not a URL`;
  }
  const shown = `${target.protocol}//${target.host}`;
  if (target.protocol !== "http:" && target.protocol !== "https:") {
    return `the artifact URL's scheme ${target.protocol} is not http or https`;
  }
  if (target.username !== "" || target.password !== "") {
    return `the artifact URL on ${shown} names user information`;
  }
  if (trusted.origins.includes(target.origin)) return undefined;
  if (trusted.controlHost !== undefined && target.hostname === trusted.controlHost) {
    return undefined;
  }
  const allowed = [...trusted.origins, ...(trusted.controlHost ? [trusted.controlHost] : [])];
  return `${target.origin} is not one of the origins this node trusts for artifacts (${allowed.join(", ")}); add it with --download-origins or --artifact-mirrors`;
}
