/**
 * The simulator's command line (SPEC §7 names the flags), parsed strictly into
 * {@link FleetOptions}: an unknown flag or a bad value gives one line naming it.
 */
import { parseArgs } from "node:util";
import { readStreamTls } from "../agent/core/tls.js";
import { HEADER_TOKEN_RULE, isHeaderToken } from "../control/shared/header-token.js";
import { parseAddress } from "../control/shared/listen-address.js";
import { isNodeId, NODE_ID_MAX_LENGTH } from "../control/shared/node-id.js";
import { parsePin } from "../control/shared/release/keys.js";
import { isSemver } from "../control/shared/release/semver.js";
import { unusableDirectory } from "../control/shared/usable-directory.js";
import type { BehaviourRates } from "./behaviours.js";
import { type FleetOptions, MAX_AGENTS, validateFleetOptions } from "./fleet-options.js";

/** What the command line asks for. */
export type CliCommand =
  | { kind: "help" }
  | {
      kind: "run";
      options: FleetOptions;
      /** pino level for the logs on stderr. */
      logLevel: string;
      /** Print a status line this often (0: never). */
      statusEveryMs: number;
    };

/** The parse result: a command, or the one-line problem. */
export type CliParse = { ok: true; command: CliCommand } | { ok: false; message: string };

const RATE_FLAGS: Record<string, keyof BehaviourRates> = {
  "refuse-rate": "refuse",
  "fail-rate": "fail",
  "no-return-rate": "noReturn",
  "revert-rate": "revert",
  "config-fail-rate": "configFail",
  "no-upgrade-cap-rate": "noUpgradeCap",
  "health-fail-rate": "healthFail",
  "offline-rate": "offline",
  "flap-rate": "flap",
  "silent-rate": "silent",
  "defer-rate": "defer",
};

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];

const s = { type: "string" } as const;
const FLAGS = {
  help: { type: "boolean", short: "h" },
  server: s,
  "join-token": s,
  count: s,
  seed: s,
  "id-prefix": s,
  labels: s,
  platform: s,
  version: s,
  "restart-ms": s,
  "flap-ms": s,
  "fail-versions": s,
  pins: s,
  threshold: s,
  "state-dir": s,
  ca: s,
  cert: s,
  key: s,
  "pool-count": s,
  "canary-count": s,
  "heartbeat-scale": s,
  "connect-rate": s,
  "step-ms": s,
  "config-fail-delay-ms": s,
  "defer-chance": s,
  "no-download": { type: "boolean" },
  "download-stall-ms": s,
  "download-origins": s,
  "status-every-ms": s,
  "log-level": s,
  ...Object.fromEntries(Object.keys(RATE_FLAGS).map((flag) => [flag, s])),
} as const;

/** The `--help` text. */
export const USAGE = `Usage: npm run sim -- --count N --server HOST:PORT --join-token TOKEN [flags]

Runs N simulated Agents, each with its own gRPC channel and stream to Control.

Connection:
  --server HOST:PORT        Control's agent endpoint (default 127.0.0.1:7443)
  --join-token TOKEN        enrollment token (default: $AGENT_SIM_JOIN_TOKEN)
  --count N                 number of agents (default 1)
  --connect-rate R          max new connections per second (default 500)
  --heartbeat-scale X       multiply the welcomed heartbeat interval (default 1)
  --state-dir DIR           keep each agent's identity and durable state in DIR/<node>.json
  --ca FILE                 CA bundle of Control's certificate (turns TLS on)
  --cert FILE --key FILE    client certificate and key of every agent (mTLS)
Identity:
  --id-prefix P             node ids P-00001… (default sim)
  --platform P              platform of every agent (default linux-amd64)
  --version V               version agents start on (default 1.0.0)
  --labels k=v,…            labels of every agent
  --pool-count N            label agent i pool=pool-<i mod N + 1>
  --canary-count K          label the first K agents canary=true
Releases:
  --pins PIN,…              release pins the agents trust (none: every upgrade refused)
  --threshold K             distinct pinned signatures required (default 1)
  --no-download             trust the operation's sha256/size instead of downloading
  --download-stall-ms MS    abort a download without progress (default 30000)
  --download-origins URL,…  origins of Control's downloads that receive node tokens
Behaviours (seeded by --seed S, default 1; rates 0–1, reactions add up to ≤ 1):
  --refuse-rate R  --fail-rate R  --no-return-rate R  --revert-rate R
  --config-fail-rate R  --no-upgrade-cap-rate R
  --health-fail-rate R      how agents react to upgrades (health-fail: the new version
                            fails its health check, the agent reverts and reports FAILED
                            health_check_failed)
  --offline-rate R          offline at start
  --flap-rate R             drop the stream every --flap-ms MIN-MAX (default 5000-30000)
  --silent-rate R           never heartbeat (stream stays open)
  --defer-rate R            busy nodes: answer an offer DEFERRED (code deferred, with a
                            reason) with a chance of --defer-chance P each (default 0.5)
  --fail-versions V,…       every agent fails to apply these versions
  --restart-ms MIN-MAX      restart delay (default 1000-3000)
  --step-ms MS              pause between upgrade phases (default 0)
  --config-fail-delay-ms MS delay of the failing ConfigStatus (default 500)
Output:
  --status-every-ms MS      status line period (default 5000, 0: none)
  --log-level LEVEL         ${LOG_LEVELS.join("|")} (default warn), logs on stderr
  -h, --help                this text
`;

/** Parses `argv` (without node and script). Never throws. */
export function parseCliArgs(argv: readonly string[], env: NodeJS.ProcessEnv = {}): CliParse {
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({ args: [...argv], options: FLAGS, strict: true, allowPositionals: false })
      .values as Record<string, string | boolean | undefined>;
  } catch (error) {
    return { ok: false, message: (error as Error).message.split("\n")[0] ?? "bad arguments" };
  }
  if (values.help === true) return { ok: true, command: { kind: "help" } };
  try {
    return { ok: true, command: toCommand(values, env) };
  } catch (error) {
    return { ok: false, message: (error as Error).message };
  }
}

/** The longest delay a timer can wait (Node clamps anything longer to 1 ms). */
const MAX_TIMER_MS = 2_147_483_647;
/** How far heartbeats may be stretched; beyond it no Control would see the agent alive. */
const MAX_HEARTBEAT_SCALE = 1000;
/** What Control accepts as a platform in a Hello (control/agents/validate.ts). */
const PLATFORM = /^[a-z0-9]+-[a-z0-9_]+$/;

function toCommand(
  v: Record<string, string | boolean | undefined>,
  env: NodeJS.ProcessEnv,
): CliCommand {
  const str = (flag: string) => {
    const value = v[flag];
    return typeof value === "string" ? value : undefined;
  };
  const int = (flag: string, min = 0, max = Number.MAX_SAFE_INTEGER) => {
    const text = str(flag);
    if (text === undefined) return undefined;
    const value = Number(text);
    if (!/^\d+$/.test(text) || !Number.isSafeInteger(value) || value < min || value > max) {
      const range = max === Number.MAX_SAFE_INTEGER ? `≥ ${min}` : `from ${min} to ${max}`;
      throw new Error(`--${flag} must be an integer ${range}, got ${JSON.stringify(text)}`);
    }
    return value;
  };
  const ms = (flag: string, min = 0) => int(flag, min, MAX_TIMER_MS);
  const positive = (flag: string, max = Number.MAX_VALUE) => {
    const text = str(flag);
    if (text === undefined) return undefined;
    const value = Number(text);
    if (text.trim() === "" || !Number.isFinite(value) || value <= 0 || value > max) {
      const range = max === Number.MAX_VALUE ? "> 0" : `> 0 and at most ${max}`;
      throw new Error(`--${flag} must be a number ${range}, got ${JSON.stringify(text)}`);
    }
    return value;
  };
  const range = (flag: string): [number, number] | undefined => {
    const text = str(flag);
    if (text === undefined) return undefined;
    const match = /^(\d+)(?:-(\d+))?$/.exec(text);
    const min = Number(match?.[1]);
    const max = Number(match?.[2] ?? match?.[1]);
    if (match === null || max < min || max > MAX_TIMER_MS) {
      throw new Error(
        `--${flag} must be MIN-MAX milliseconds (e.g. 1000-5000, at most ${MAX_TIMER_MS}), got ${JSON.stringify(text)}`,
      );
    }
    return [min, max];
  };
  const list = (flag: string) =>
    str(flag)
      ?.split(",")
      .map((item) => item.trim())
      .filter((item) => item !== "");
  const chance = (flag: string) => {
    const text = str(flag);
    if (text === undefined) return undefined;
    const value = Number(text);
    if (text.trim() === "" || !Number.isFinite(value) || value < 0 || value > 1) {
      throw new Error(`--${flag} must be a number from 0 to 1, got ${JSON.stringify(text)}`);
    }
    return value;
  };
  const rates: BehaviourRates = {};
  for (const [flag, key] of Object.entries(RATE_FLAGS)) {
    const value = chance(flag);
    if (value !== undefined) rates[key] = value;
  }
  const logLevel = str("log-level") ?? "warn";
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new Error(
      `--log-level must be one of ${LOG_LEVELS.join(", ")}, got ${JSON.stringify(logLevel)}`,
    );
  }
  const count = int("count", 1, MAX_AGENTS) ?? 1;
  const options: FleetOptions = {
    server: checkServer(str("server") ?? "127.0.0.1:7443"),
    count,
    connectRate: positive("connect-rate") ?? 500,
    rates,
    download: v["no-download"] !== true,
  };
  const tls = readStreamTls({ ca: str("ca"), cert: str("cert"), key: str("key") });
  if (tls !== undefined) options.tls = tls;
  const joinToken = checkJoinToken(str("join-token"), env.AGENT_SIM_JOIN_TOKEN);
  if (joinToken !== undefined) options.joinToken = joinToken;
  const pins = list("pins");
  pins?.forEach(checkPin);
  const optional: { [K in keyof FleetOptions]?: FleetOptions[K] | undefined } = {
    seed: int("seed"),
    idPrefix: checkIdPrefix(str("id-prefix"), count),
    labels: parseLabels(str("labels")),
    platform: checkPlatform(str("platform")),
    version: checkVersion(str("version"), "version"),
    restartMs: range("restart-ms"),
    flapMs: range("flap-ms"),
    failVersions: list("fail-versions")?.map((version) => checkVersion(version, "fail-versions")),
    pins,
    threshold: int("threshold", 1, 1000),
    stateDir: checkStateDir(str("state-dir")),
    poolCount: int("pool-count", 0, MAX_AGENTS),
    canaryCount: int("canary-count", 0, MAX_AGENTS),
    heartbeatScale: positive("heartbeat-scale", MAX_HEARTBEAT_SCALE),
    stepMs: ms("step-ms"),
    configFailDelayMs: ms("config-fail-delay-ms"),
    deferChance: chance("defer-chance"),
    downloadStallMs: ms("download-stall-ms", 1),
    downloadOrigins: list("download-origins"),
  };
  for (const [key, value] of Object.entries(optional)) {
    if (value !== undefined) (options as unknown as Record<string, unknown>)[key] = value;
  }
  const problem = validateFleetOptions(options);
  if (problem !== undefined) throw new Error(problem);
  return { kind: "run", options, logLevel, statusEveryMs: ms("status-every-ms") ?? 5000 };
}

/** `--server`: HOST:PORT with a port from 1 to 65535 (IPv6 hosts in brackets). */
function checkServer(text: string): string {
  const address = parseAddress(text);
  if (address === undefined || address.port === 0 || address.host === "" || text !== text.trim()) {
    throw new Error(
      `--server must be HOST:PORT with a port from 1 to 65535, got ${JSON.stringify(text)}`,
    );
  }
  return text;
}

/** `--join-token` (or AGENT_SIM_JOIN_TOKEN): sent as a header, so header-safe. Never echoed. */
function checkJoinToken(flag: string | undefined, fromEnv: string | undefined): string | undefined {
  const [token, source] =
    flag !== undefined
      ? [flag, "--join-token"]
      : fromEnv !== undefined && fromEnv !== ""
        ? [fromEnv, "AGENT_SIM_JOIN_TOKEN"]
        : [undefined, ""];
  if (token !== undefined && !isHeaderToken(token)) {
    throw new Error(`${source} ${HEADER_TOKEN_RULE}`);
  }
  return token;
}

function checkPin(pin: string): void {
  try {
    parsePin(pin);
  } catch (error) {
    throw new Error(`--pins: ${(error as Error).message}`);
  }
}

/** `--id-prefix`: the node ids `<prefix>-00001`… it makes must be ones Control accepts. */
function checkIdPrefix(prefix: string | undefined, count: number): string | undefined {
  if (prefix === undefined) return undefined;
  const last = `${prefix}-${String(count).padStart(5, "0")}`;
  if (!isNodeId(`${prefix}-00001`) || !isNodeId(last)) {
    throw new Error(
      `--id-prefix must start with a letter or digit and hold only letters, digits, '.', '_', ':' or '-', with ${last} at most ${NODE_ID_MAX_LENGTH} characters`,
    );
  }
  return prefix;
}

function checkPlatform(platform: string | undefined): string | undefined {
  if (platform !== undefined && (!PLATFORM.test(platform) || platform.length > 32)) {
    throw new Error(`--platform must look like linux-amd64, got ${JSON.stringify(platform)}`);
  }
  return platform;
}

function checkVersion<T extends string | undefined>(version: T, flag: string): T {
  if (version !== undefined && !isSemver(version)) {
    throw new Error(
      `--${flag} must be a semantic version such as 1.4.0, got ${JSON.stringify(version)}`,
    );
  }
  return version;
}

/** `--state-dir`: a directory this process may use or create (control/shared/usable-directory). */
function checkStateDir(dir: string | undefined): string | undefined {
  if (dir === undefined) return undefined;
  const problem = unusableDirectory(dir);
  if (problem !== undefined) throw new Error(`--state-dir ${JSON.stringify(dir)} ${problem}`);
  return dir;
}

function parseLabels(text: string | undefined): Record<string, string> | undefined {
  if (text === undefined) return undefined;
  const labels: Record<string, string> = {};
  for (const pair of text.split(",")) {
    if (pair.trim() === "") continue;
    const eq = pair.indexOf("=");
    const key = pair.slice(0, eq).trim();
    if (eq <= 0 || key === "") {
      throw new Error(`--labels must be k=v,… pairs, got ${JSON.stringify(pair)}`);
    }
    labels[key] = pair.slice(eq + 1).trim();
  }
  return labels;
}
