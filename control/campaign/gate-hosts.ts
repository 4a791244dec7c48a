/**
 * The gate host allow-list (`gates.allowedHosts`): when configured, a gate may only name a
 * URL on one of its hosts, so a campaign cannot make Control send requests (and a webhook's
 * campaign facts) anywhere else on its network. An entry is `HOST` or `HOST:PORT`: `HOST`
 * allows that host on the default port of the URL's scheme (80 for http, 443 for https),
 * `HOST:PORT` that host on that port only. Host names compare as URLs normalise them
 * (lower case, IPv6 in brackets). Pure; admission and the gate client both ask it.
 */

/** One parsed allow-list entry. */
interface AllowedHost {
  readonly hostname: string;
  /** Undefined: the default port of the gate URL's scheme. */
  readonly port: number | undefined;
}

/** The config key, named in every refusal. */
export const GATE_HOSTS_KEY = "gates.allowedHosts";

/**
 * Parses an allow-list entry; a message saying what is wrong when it is not `HOST` or
 * `HOST:PORT` (no scheme, path, user or query).
 */
export function parseAllowedHost(
  entry: string,
): { ok: true; host: AllowedHost } | { ok: false; message: string } {
  const bad = {
    ok: false as const,
    message: `"${entry}" must be HOST or HOST:PORT (no scheme or path)`,
  };
  if (entry.length === 0 || /[/?#@\s]/.test(entry)) return bad;
  let url: URL;
  try {
    url = new URL(`http://${entry}`);
  } catch {
    return bad;
  }
  if (url.pathname !== "/" || url.username || url.password) return bad;
  const explicit = /:(\d+)$/.exec(entry);
  const port = explicit ? Number(explicit[1]) : undefined;
  if (port !== undefined && (port < 1 || port > 65535)) return bad;
  return { ok: true, host: { hostname: url.hostname, port } };
}

function defaultPort(protocol: string): number {
  return protocol === "https:" ? 443 : 80;
}

/**
 * Undefined when `url` is on a host of `allowed` (or `allowed` is undefined: no allow-list);
 * otherwise why not, naming the host and {@link GATE_HOSTS_KEY}. Entries that do not parse
 * allow nothing (the configuration refuses them at start).
 */
export function gateHostRefusal(
  url: string,
  allowed: readonly string[] | undefined,
): string | undefined {
  if (allowed === undefined) return undefined;
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return `gate URL "${url}" is not a URL`;
  }
  const port = u.port === "" ? defaultPort(u.protocol) : Number(u.port);
  for (const entry of allowed) {
    const parsed = parseAllowedHost(entry);
    if (!parsed.ok) continue;
    const { hostname, port: want } = parsed.host;
    if (hostname === u.hostname && (want ?? defaultPort(u.protocol)) === port) return undefined;
  }
  const host = `${u.hostname}:${port}`;
  const list = allowed.length === 0 ? "it is empty" : `it allows ${allowed.join(", ")}`;
  return `gate host ${host} is not in ${GATE_HOSTS_KEY} (${list}): add it to the config, or name a gate on an allowed host`;
}
