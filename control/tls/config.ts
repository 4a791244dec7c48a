/**
 * The `tls` section of Control's configuration: certificate files for the agent stream
 * (optionally with client certificates, mTLS) and for the admin API. Files are read and
 * checked at start, so a wrong path or a key that does not fit its certificate is named in
 * the configuration error instead of failing the first handshake. The downloads listener
 * (`tls.downloads`) has a certificate and optionally a client CA, as the agent stream does.
 */
import { readFileSync } from "node:fs";
import { createSecureContext } from "node:tls";

/** TLS of the agent stream. */
export interface AgentTlsConfig {
  /** PEM certificate chain and private key Control presents. */
  readonly cert: string;
  readonly key: string;
  /** PEM CA bundle that signs Agents' client certificates; undefined = no client certs. */
  readonly clientCa: string | undefined;
  /** Refuse connections without a valid client certificate (default: true with `clientCa`). */
  readonly requireClientCert: boolean;
}

/** TLS of the admin API. */
export interface AdminTlsConfig {
  readonly cert: string;
  readonly key: string;
}

/** TLS of the downloads listener (`downloads.addr`). */
export interface DownloadsTlsConfig {
  readonly cert: string;
  readonly key: string;
  /**
   * PEM CA bundle of Agents' client certificates: clients are asked for one (never refused
   * without one), and a verified one names the node as on the agent stream. Unset, it is the
   * agent stream's client CA (`tls.agent.clientCa`) when that is set.
   */
  readonly clientCa: string | undefined;
}

/** The validated `tls` section: each listener is in clear text when its entry is undefined. */
export interface TlsConfig {
  readonly agent: AgentTlsConfig | undefined;
  readonly admin: AdminTlsConfig | undefined;
  readonly downloads: DownloadsTlsConfig | undefined;
}

/** Environment variables that set TLS file paths (they win over the config file). */
export const TLS_ENV = {
  AGENT_CONTROL_AGENT_TLS_CERT: ["agent", "cert"],
  AGENT_CONTROL_AGENT_TLS_KEY: ["agent", "key"],
  AGENT_CONTROL_AGENT_TLS_CLIENT_CA: ["agent", "clientCa"],
  AGENT_CONTROL_AGENT_TLS_REQUIRE_CLIENT_CERT: ["agent", "requireClientCert"],
  AGENT_CONTROL_ADMIN_TLS_CERT: ["admin", "cert"],
  AGENT_CONTROL_ADMIN_TLS_KEY: ["admin", "key"],
  AGENT_CONTROL_DOWNLOADS_TLS_CERT: ["downloads", "cert"],
  AGENT_CONTROL_DOWNLOADS_TLS_KEY: ["downloads", "key"],
  AGENT_CONTROL_DOWNLOADS_TLS_CLIENT_CA: ["downloads", "clientCa"],
} as const;

/** The `tls` config input the TLS environment variables amount to (empty when none is set). */
export function tlsEnvInput(
  env: Readonly<Record<string, string | undefined>>,
): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const [name, [listener, key]] of Object.entries(TLS_ENV)) {
    const value = env[name];
    if (value === undefined || value === "") continue;
    const section = out[listener] ?? {};
    section[key] = key === "requireClientCert" ? parseBoolean(value) : value;
    out[listener] = section;
  }
  return out;
}

function parseBoolean(text: string): boolean | string {
  if (/^(true|1|yes)$/i.test(text)) return true;
  if (/^(false|0|no)$/i.test(text)) return false;
  return text;
}

/**
 * Validates the `tls` section, pushing one problem per bad value (with its full key name).
 * Reads every named file and checks that each key fits its certificate.
 */
export function readTlsConfig(input: unknown, problems: string[]): TlsConfig {
  const none = { agent: undefined, admin: undefined, downloads: undefined };
  if (input === undefined) return none;
  if (!isRecord(input)) {
    problems.push("tls: must be an object with 'agent', 'admin' and/or 'downloads'");
    return none;
  }
  for (const key of Object.keys(input)) {
    if (key !== "agent" && key !== "admin" && key !== "downloads") {
      problems.push(`tls.${key}: unknown setting`);
    }
  }
  const agent = readAgent(input.agent, problems);
  const downloads = readDownloads(input.downloads, problems);
  return {
    agent,
    admin: readAdmin(input.admin, problems),
    // Without a client CA of its own, the downloads listener verifies the agent stream's
    // client certificates: a node enrolled by certificate (no node token) then downloads.
    downloads:
      downloads !== undefined && downloads.clientCa === undefined && agent?.clientCa !== undefined
        ? { ...downloads, clientCa: agent.clientCa }
        : downloads,
  };
}

function readAgent(input: unknown, problems: string[]): AgentTlsConfig | undefined {
  const section = sectionOf(input, "tls.agent", ["cert", "key", "clientCa", "requireClientCert"]);
  if (!section) {
    if (input !== undefined) problems.push("tls.agent: must be an object");
    return undefined;
  }
  problems.push(...section.problems);
  const pair = readPair(section.value, "tls.agent", problems);
  const clientCaPath = section.value.clientCa;
  let clientCa: string | undefined;
  if (clientCaPath !== undefined) {
    clientCa = readPem(clientCaPath, "tls.agent.clientCa", "CERTIFICATE", problems);
    if (clientCa !== undefined && !checkContext({ ca: clientCa }, "tls.agent.clientCa", problems))
      clientCa = undefined;
  }
  const require = section.value.requireClientCert;
  if (require !== undefined && typeof require !== "boolean") {
    problems.push("tls.agent.requireClientCert: must be true or false");
  }
  if (require === true && clientCaPath === undefined) {
    problems.push("tls.agent.requireClientCert: needs tls.agent.clientCa (the CA of client certs)");
  }
  if (clientCaPath !== undefined && !pair && !hasPairKeys(section.value)) {
    problems.push("tls.agent.clientCa: needs tls.agent.cert and tls.agent.key as well");
  }
  if (!pair) return undefined;
  return {
    ...pair,
    clientCa,
    requireClientCert: typeof require === "boolean" ? require : clientCaPath !== undefined,
  };
}

function readAdmin(input: unknown, problems: string[]): AdminTlsConfig | undefined {
  const section = sectionOf(input, "tls.admin", ["cert", "key"]);
  if (!section) {
    if (input !== undefined) problems.push("tls.admin: must be an object");
    return undefined;
  }
  problems.push(...section.problems);
  return readPair(section.value, "tls.admin", problems);
}

function readDownloads(input: unknown, problems: string[]): DownloadsTlsConfig | undefined {
  const section = sectionOf(input, "tls.downloads", ["cert", "key", "clientCa"]);
  if (!section) {
    if (input !== undefined) problems.push("tls.downloads: must be an object");
    return undefined;
  }
  problems.push(...section.problems);
  const pair = readPair(section.value, "tls.downloads", problems);
  const clientCaPath = section.value.clientCa;
  let clientCa: string | undefined;
  if (clientCaPath !== undefined) {
    clientCa = readPem(clientCaPath, "tls.downloads.clientCa", "CERTIFICATE", problems);
    if (
      clientCa !== undefined &&
      !checkContext({ ca: clientCa }, "tls.downloads.clientCa", problems)
    )
      clientCa = undefined;
    if (!pair && !hasPairKeys(section.value)) {
      problems.push(
        "tls.downloads.clientCa: needs tls.downloads.cert and tls.downloads.key as well",
      );
    }
  }
  return pair ? { ...pair, clientCa } : undefined;
}

function hasPairKeys(section: Record<string, unknown>): boolean {
  return section.cert !== undefined || section.key !== undefined;
}

/** Reads `cert` and `key` (both or neither) and checks the key fits the certificate. */
function readPair(
  section: Record<string, unknown>,
  name: string,
  problems: string[],
): { cert: string; key: string } | undefined {
  if (section.cert === undefined && section.key === undefined) return undefined;
  if (section.cert === undefined || section.key === undefined) {
    const missing = section.cert === undefined ? "cert" : "key";
    problems.push(`${name}.${missing}: must be set together with ${name}.${other(missing)}`);
    return undefined;
  }
  const cert = readPem(section.cert, `${name}.cert`, "CERTIFICATE", problems);
  const key = readPem(section.key, `${name}.key`, "PRIVATE KEY", problems);
  if (cert === undefined || key === undefined) return undefined;
  if (!checkContext({ cert, key }, `${name}.key`, problems)) return undefined;
  return { cert, key };
}

function other(which: "cert" | "key"): string {
  return which === "cert" ? "key" : "cert";
}

/** Reads a PEM file; `label` is matched loosely ("PRIVATE KEY" also finds "EC PRIVATE KEY"). */
function readPem(
  path: unknown,
  name: string,
  label: string,
  problems: string[],
): string | undefined {
  if (typeof path !== "string" || path.length === 0) {
    problems.push(`${name}: must be a file path`);
    return undefined;
  }
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "unreadable";
    problems.push(`${name}: cannot read ${path} (${code})`);
    return undefined;
  }
  if (!new RegExp(`-----BEGIN [A-Z ]*${label}-----`).test(text)) {
    problems.push(`${name}: ${path} holds no PEM ${label.toLowerCase()}`);
    return undefined;
  }
  return text;
}

function checkContext(
  options: { cert?: string; key?: string; ca?: string },
  name: string,
  problems: string[],
): boolean {
  try {
    createSecureContext(options);
    return true;
  } catch (error) {
    const detail = (error as Error).message.split("\n")[0] ?? "invalid";
    const what = options.ca ? "is not a valid CA certificate" : "does not fit the certificate";
    problems.push(`${name}: ${what} (${detail})`);
    return false;
  }
}

function sectionOf(
  input: unknown,
  name: string,
  keys: readonly string[],
): { value: Record<string, unknown>; problems: string[] } | undefined {
  if (input === undefined) return { value: {}, problems: [] };
  if (!isRecord(input)) return undefined;
  const problems = Object.keys(input)
    .filter((key) => !keys.includes(key))
    .map((key) => `${name}.${key}: unknown setting`);
  return { value: input, problems };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
