/**
 * Where an Agent's node token may go: the origins (scheme, host and port) it was configured
 * with, never one an artifact URL names.
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
