/**
 * The `gates` section of Control's configuration: `gates.allowedHosts`, the hosts a
 * campaign's gates may name (control/campaign/gate-hosts.ts). Unset: any host; a list
 * (empty included): only those.
 */
import { GATE_HOSTS_KEY, parseAllowedHost } from "./campaign/index.js";
import { type ConfigInput, isRecord } from "./config-reader.js";

/** What gates may reach. */
export interface GatesConfig {
  /** `HOST` or `HOST:PORT` entries; undefined: no allow-list. */
  readonly allowedHosts: readonly string[] | undefined;
}

/** Reads the `gates` section, one problem per bad value, each naming its key. */
export function readGatesConfig(input: unknown, problems: string[]): GatesConfig {
  if (input === undefined) return { allowedHosts: undefined };
  if (!isRecord(input)) {
    problems.push("gates: must be an object");
    return { allowedHosts: undefined };
  }
  for (const key of Object.keys(input)) {
    if (key !== "allowedHosts") problems.push(`gates.${key}: unknown setting`);
  }
  const list: unknown = (input as ConfigInput).allowedHosts;
  if (list === undefined) return { allowedHosts: undefined };
  if (!Array.isArray(list) || !list.every((item) => typeof item === "string")) {
    problems.push(`${GATE_HOSTS_KEY}: must be a list of HOST or HOST:PORT strings`);
    return { allowedHosts: undefined };
  }
  list.forEach((entry: string, i) => {
    const parsed = parseAllowedHost(entry);
    if (!parsed.ok) problems.push(`${GATE_HOSTS_KEY}[${i}]: ${parsed.message}`);
  });
  return { allowedHosts: list as string[] };
}
