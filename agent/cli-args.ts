/**
 * The Agent's command line (SPEC §8 names it), parsed strictly: an unknown flag or a bad
 * value gives one line naming it, before anything starts.
 *
 * - `run`: the supervisor (installs the running code as the first version of an empty
 *   install directory, then runs `current` as its child);
 * - `serve`: the Agent itself, as the supervisor starts it from `current/agent` (a single
 *   executable) or `current/agent.mjs` (with Node.js);
 * - `status`: the install directory's state as JSON.
 */
import { parseArgs } from "node:util";
import { HEADER_TOKEN_RULE, isHeaderToken } from "../control/shared/header-token.js";
import { parseAddress } from "../control/shared/listen-address.js";
import { isNodeId, NODE_ID_MAX_LENGTH } from "../control/shared/node-id.js";
import { parsePin } from "../control/shared/release/keys.js";
import { unusableDirectory } from "../control/shared/usable-directory.js";
import { readStreamTls } from "./core/tls.js";
import { DEFAULT_TUF_REFRESH_MS } from "./core/trust-refresh.js";
import { artifactMirrors, downloadOrigins, isLoopbackHost, tufOptions } from "./trust-args.js";

/** PEM files of the agent stream's TLS. */
export interface TlsFiles {
  /** CA bundle that signs Control's certificate (absent: the system's CAs). */
  readonly ca?: string;
  /** Client certificate and key for mTLS. */
  readonly cert?: string;
  readonly key?: string;
}

/** What `run` and `serve` need. */
export interface RunOptions {
  readonly installDir: string;
  readonly server: string;
  readonly joinToken: string | undefined;
  readonly pins: readonly string[];
  readonly threshold: number;
  /** The node id for a new install (default: the host name); an install keeps its own. */
  readonly nodeId: string | undefined;
  /** The platform reported to Control; undefined: the artifact's, else this host's. */
  readonly platform: string | undefined;
  readonly labels: Readonly<Record<string, string>>;
  /** TLS files of the stream (absent: the system's roots, or clear text per `clearText`). */
  readonly tls: TlsFiles | undefined;
  /**
   * The stream and downloads go in clear text: `--insecure`, or a loopback server without
   * TLS files. Otherwise the Agent uses TLS and verifies Control with `--ca` or the system roots.
   */
  readonly clearText: boolean;
  /** Origins (scheme://host:port) besides Control's own that may receive the node token. */
  readonly downloadOrigins: readonly string[];
  /**
   * Origins (scheme://host:port) artifacts may also be fetched from (mirrors); they never
   * receive the node token. An artifact URL outside every trusted origin is refused.
   */
  readonly artifactMirrors: readonly string[];
  /** Time a download has before its rate is judged. */
  readonly downloadGraceMs: number;
  /** The slowest average download rate accepted after the grace, in bytes per second. */
  readonly downloadMinBytesPerSecond: number;
  /** How long a newly switched version has to be welcomed before it is reverted. */
  readonly startDeadlineMs: number;
  /**
   * The release channel as a TUF repository: the root.json trusted at install and the base
   * URL of Control's metadata (`https://control.example:7081/tuf/`). Undefined: pins only.
   */
  readonly tuf: { readonly root: string; readonly url: string } | undefined;
  /** How often the TUF metadata is refreshed without an upgrade (`--tuf-refresh`, default 1 h). */
  readonly tufRefreshMs: number;
  /** While this file exists the node answers upgrades DEFERRED (an update lock). */
  readonly deferLock: string | undefined;
  /** A program (and its arguments, split on spaces) that exits non-zero while the node is busy. */
  readonly deferCommand: readonly string[] | undefined;
}

/** What the command line asks for. */
export type AgentCommand =
  | { kind: "help" }
  | { kind: "status"; installDir: string }
  | { kind: "run" | "serve"; options: RunOptions };

/** The parse result: a command, or the one-line problem. */
export type AgentParse = { ok: true; command: AgentCommand } | { ok: false; message: string };

/** The default start deadline: 60 s. */
export const DEFAULT_START_DEADLINE_MS = 60_000;

const s = { type: "string" } as const;
const FLAGS = {
  help: { type: "boolean", short: "h" },
  "install-dir": s,
  server: s,
  "join-token": s,
  pins: s,
  threshold: s,
  ca: s,
  cert: s,
  key: s,
  "node-id": s,
  platform: s,
  labels: s,
  "start-deadline-ms": s,
  insecure: { type: "boolean" },
  "download-origins": s,
  "artifact-mirrors": s,
  "download-grace-ms": s,
  "download-min-rate": s,
  "tuf-root": s,
  "tuf-url": s,
  "tuf-refresh": s,
  "defer-lock": s,
  "defer-command": s,
} as const;

/**
 * The `--help` text, with `command` the way this Agent is run: `npm run agent --` from
 * source, `node /path/agent.mjs` for the bundled module, the executable's own path for the
 * single executable (a node that has neither npm nor Node.js).
 */
export function usage(command: string): string {
  const pad = " ".repeat(command.length);
  return `Usage:
  ${command} run --install-dir DIR --server HOST:PORT --join-token T --pins PIN[,PIN]
  ${pad}     [--threshold K] [--ca FILE] [--cert FILE --key FILE] [flags]
  ${command} status --install-dir DIR

run     supervise the Agent installed in DIR: start current/agent (a single executable)
        or current/agent.mjs (with Node.js), restart it when it exits, revert a newly
        switched version that crashes or is not welcomed in time.
        An empty DIR gets the running code as its first version.
status  print DIR's current and previous version, confirmed sequence, pending switch,
        node id and whether it enrolled (by node token or client certificate) as JSON.

Flags of run:
  --install-dir DIR         the install directory (versions/, current, state.json)
  --server HOST:PORT        Control's agent endpoint
  --join-token T            enrollment token, until the node holds a node token
                            (default: $AGENT_JOIN_TOKEN)
  --pins PIN,…              release signing keys this node trusts
  --threshold K             distinct pinned signatures a release needs (default 1)
  --ca FILE                 CA bundle of Control's certificate (default: the system's roots)
  --cert FILE --key FILE    client certificate and key (mTLS)
  --insecure                clear text to a server that is not on loopback (never in
                            production; a loopback server without --ca is clear text)
  --download-origins URL,…  origins (scheme://host:port) of Control's downloads: the only
                            places besides the stream's own that receive the node token
  --artifact-mirrors URL,…  origins (scheme://host:port) artifacts may also come from (never
                            sent the node token); an artifact URL outside Control's host (or,
                            once origins are named, outside them) is refused
                            artifact_origin_refused before any request
  --download-grace-ms MS    time a download has before its rate is judged (default 30000)
  --download-min-rate B     slowest average download rate in bytes/s (default 16384); a
                            download also ends by grace + size / rate
  --node-id ID              node id of a new install (default: the host name)
  --platform P              platform reported to Control (default: this host's, e.g. linux-amd64)
  --labels k=v,…            labels sent in Hello
  --tuf-root FILE           the release channel's TUF root.json, trusted from install on
  --tuf-url URL             base URL of the channel's TUF metadata (Control's /tuf/);
                            with both, a release must also be listed there, unexpired
  --tuf-refresh DURATION    how often the TUF metadata is refreshed without an upgrade
                            (default 1h; e.g. 15m, 1h30m, 30s): an expired or withheld
                            timestamp is then reported as frozen (trust.frozen)
  --start-deadline-ms MS    a new version not welcomed by Control within MS is reverted
                            (default ${DEFAULT_START_DEADLINE_MS})
  --defer-lock FILE         while FILE exists, answer upgrades DEFERRED (the node is busy;
                            Control offers again later, up to the campaign's --max-defer)
  --defer-command "CMD …"   answer upgrades DEFERRED while CMD exits non-zero (no shell;
                            its first output line is the reason)
  -h, --help                this text
`;
}

/** The `--help` text of the Agent run from source. */
export const USAGE = usage("npm run agent --");

/** Parses `argv` (without node and script). Never throws. */
export function parseAgentArgs(argv: readonly string[], env: NodeJS.ProcessEnv = {}): AgentParse {
  const [command, ...rest] = argv;
  if (command === undefined || command === "-h" || command === "--help" || command === "help") {
    return { ok: true, command: { kind: "help" } };
  }
  if (command !== "run" && command !== "serve" && command !== "status") {
    return { ok: false, message: `unknown command ${JSON.stringify(command)} (run or status)` };
  }
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({ args: rest, options: FLAGS, strict: true, allowPositionals: false })
      .values as Record<string, string | boolean | undefined>;
  } catch (error) {
    return { ok: false, message: (error as Error).message.split("\n")[0] ?? "bad arguments" };
  }
  if (values.help === true) return { ok: true, command: { kind: "help" } };
  try {
    const str = (flag: string) => {
      const value = values[flag];
      return typeof value === "string" ? value : undefined;
    };
    const installDir = checkInstallDir(str("install-dir"));
    if (command === "status") {
      const extra = Object.keys(values).find((flag) => flag !== "install-dir");
      if (extra !== undefined) throw new Error(`--${extra} does not apply to status`);
      return { ok: true, command: { kind: "status", installDir } };
    }
    const flag = (name: string) => values[name] === true;
    return {
      ok: true,
      command: { kind: command, options: toRunOptions(installDir, str, flag, env) },
    };
  } catch (error) {
    return { ok: false, message: (error as Error).message };
  }
}

const MAX_TIMER_MS = 2_147_483_647;
const PLATFORM = /^[a-z0-9]+-[a-z0-9_]+$/;

function toRunOptions(
  installDir: string,
  str: (flag: string) => string | undefined,
  flag: (name: string) => boolean,
  env: NodeJS.ProcessEnv,
): RunOptions {
  const server = str("server");
  if (server === undefined) throw new Error("--server HOST:PORT is required");
  const address = parseAddress(server);
  if (address === undefined || address.port === 0 || address.host === "") {
    throw new Error(
      `--server must be HOST:PORT with a port from 1 to 65535, got ${JSON.stringify(server)}`,
    );
  }
  const pins = (str("pins") ?? "")
    .split(",")
    .map((pin) => pin.trim())
    .filter((pin) => pin !== "");
  if (pins.length === 0) throw new Error("--pins is required: the release keys this node trusts");
  for (const pin of pins) {
    try {
      parsePin(pin);
    } catch (error) {
      throw new Error(`--pins: ${(error as Error).message}`);
    }
  }
  const threshold = integer(str("threshold"), "threshold", 1, 1000) ?? 1;
  if (threshold > new Set(pins).size) {
    throw new Error(`--threshold ${threshold} is more than the ${new Set(pins).size} pins given`);
  }
  const nodeId = str("node-id");
  if (nodeId !== undefined && !isNodeId(nodeId)) {
    throw new Error(
      `--node-id must start with a letter or digit and hold only letters, digits, '.', '_', ':' or '-' (at most ${NODE_ID_MAX_LENGTH} characters)`,
    );
  }
  const platform = str("platform");
  if (platform !== undefined && (!PLATFORM.test(platform) || platform.length > 32)) {
    throw new Error(`--platform must look like linux-amd64, got ${JSON.stringify(platform)}`);
  }
  const tls = tlsFiles(str("ca"), str("cert"), str("key"));
  const insecure = flag("insecure");
  if (insecure && tls !== undefined) {
    throw new Error("--insecure contradicts --ca, --cert and --key (they turn TLS on)");
  }
  const tuf = tufOptions(str("tuf-root"), str("tuf-url"));
  if (tuf === undefined && str("tuf-refresh") !== undefined) {
    throw new Error("--tuf-refresh needs --tuf-root and --tuf-url (it refreshes that channel)");
  }
  return {
    installDir,
    server,
    joinToken: joinToken(str("join-token"), env.AGENT_JOIN_TOKEN),
    pins,
    threshold,
    nodeId,
    platform,
    labels: labels(str("labels")),
    tls,
    clearText: tls === undefined && (insecure || isLoopbackHost(address.host)),
    downloadOrigins: downloadOrigins(str("download-origins"), insecure),
    artifactMirrors: artifactMirrors(str("artifact-mirrors")),
    downloadGraceMs:
      integer(str("download-grace-ms"), "download-grace-ms", 0, MAX_TIMER_MS) ?? 30_000,
    downloadMinBytesPerSecond:
      integer(str("download-min-rate"), "download-min-rate", 1, 1 << 30) ?? 16 * 1024,
    startDeadlineMs:
      integer(str("start-deadline-ms"), "start-deadline-ms", 1, MAX_TIMER_MS) ??
      DEFAULT_START_DEADLINE_MS,
    tuf,
    tufRefreshMs: refreshPeriod(str("tuf-refresh")),
    deferLock: str("defer-lock") || undefined,
    deferCommand: deferCommand(str("defer-command")),
  };
}

function deferCommand(text: string | undefined): readonly string[] | undefined {
  const words = text?.split(" ").filter((w) => w !== "");
  return words === undefined || words.length === 0 ? undefined : words;
}

/** This host's platform in release terms (`linux-amd64`, `linux-arm64`, …). */
export function hostPlatform(): string {
  const arch = process.arch === "x64" ? "amd64" : process.arch;
  return `${process.platform}-${arch}`;
}

const DURATION = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/;

/** `--tuf-refresh`: h, m and s in that order (`1h`, `15m`, `1h30m`, `30s`), from 1 s to 24 h. */
function refreshPeriod(text: string | undefined): number {
  if (text === undefined) return DEFAULT_TUF_REFRESH_MS;
  const match = DURATION.exec(text);
  const [, h = "0", m = "0", sec = "0"] = match ?? [];
  const ms = ((Number(h) * 60 + Number(m)) * 60 + Number(sec)) * 1000;
  if (text === "" || match === null || ms < 1000 || ms > 24 * 3600 * 1000) {
    throw new Error(
      `--tuf-refresh must be a duration from 1s to 24h such as 15m, 1h or 1h30m, got ${JSON.stringify(text)}`,
    );
  }
  return ms;
}

function checkInstallDir(dir: string | undefined): string {
  if (dir === undefined) throw new Error("--install-dir DIR is required");
  const problem = unusableDirectory(dir);
  if (problem !== undefined) throw new Error(`--install-dir ${JSON.stringify(dir)} ${problem}`);
  return dir;
}

function integer(text: string | undefined, flag: string, min: number, max: number) {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new Error(
      `--${flag} must be an integer from ${min} to ${max}, got ${JSON.stringify(text)}`,
    );
  }
  return value;
}

function joinToken(flag: string | undefined, fromEnv: string | undefined): string | undefined {
  const [token, source] =
    flag !== undefined
      ? [flag, "--join-token"]
      : fromEnv !== undefined && fromEnv !== ""
        ? [fromEnv, "AGENT_JOIN_TOKEN"]
        : [undefined, ""];
  if (token !== undefined && !isHeaderToken(token))
    throw new Error(`${source} ${HEADER_TOKEN_RULE}`);
  return token;
}

function tlsFiles(
  ca: string | undefined,
  cert: string | undefined,
  key: string | undefined,
): TlsFiles | undefined {
  if (readStreamTls({ ca, cert, key }) === undefined) return undefined;
  return {
    ...(ca !== undefined ? { ca } : {}),
    ...(cert !== undefined ? { cert } : {}),
    ...(key !== undefined ? { key } : {}),
  };
}

function labels(text: string | undefined): Record<string, string> {
  const result: Record<string, string> = {};
  if (text === undefined) return result;
  for (const pair of text.split(",")) {
    if (pair.trim() === "") continue;
    const eq = pair.indexOf("=");
    const key = pair.slice(0, eq).trim();
    if (eq <= 0 || key === "")
      throw new Error(`--labels must be k=v,… pairs, got ${JSON.stringify(pair)}`);
    result[key] = pair.slice(eq + 1).trim();
  }
  return result;
}
