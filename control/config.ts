/**
 * Control's configuration: defaults, an optional JSON file, then environment variables,
 * validated once at start. Every bad value is named in one error, so an operator fixes
 * them all in one go.
 */
import { readFileSync } from "node:fs";
import { type AdminTimeoutsConfig, readAdminSocket, readAdminTimeouts } from "./config-admin.js";
import {
  type AdminTokensFile,
  checkDataDir,
  checkReleasePins,
  checkStreamBurst,
  readAdminAccess,
  withSources,
} from "./config-checks.js";
import {
  clearTextExposed,
  clearTextProblem,
  defaultAgentAddr,
  isLoopbackHost,
  type ListenerFacts,
} from "./config-clear-text.js";
import { type EnrollmentConfig, readEnrollment } from "./config-enrollment.js";
import { type GatesConfig, readGatesConfig } from "./config-gates.js";
import { type LimitsConfig, readLimits } from "./config-limits.js";
import { type ConfigInput, type ConfiguredAdminToken, isRecord, Reader } from "./config-reader.js";
import { configFileSecrets, exposedFileProblem } from "./config-secret-files.js";
import type { ListenAddress } from "./shared/listen-address.js";
import { readTlsConfig, TLS_ENV, type TlsConfig, tlsEnvInput } from "./tls/config.js";
import { readTufConfig, type TufConfig } from "./tuf/config.js";

/** The validated configuration of one Control process. */
export interface ControlConfig {
  /** Where the embedded database and generated secrets live. */
  readonly dataDir: string;
  /** PostgreSQL to use; the embedded server runs when undefined. */
  readonly databaseUrl: string | undefined;
  readonly agentAddr: ListenAddress;
  readonly adminAddr: ListenAddress;
  /**
   * The admin API's Unix socket, absolute (`adminSocket`; default
   * `<dataDir>/control-run/admin.sock`): the only way agentctl sends the local token file.
   */
  readonly adminSocket: string;
  /** The operator token from `AGENT_CONTROL_ADMIN_TOKEN`; generated on first start when undefined. */
  readonly adminToken: string | undefined;
  /** More admin tokens (viewers, named operators) from the config file. */
  readonly adminTokens: readonly ConfiguredAdminToken[];
  /** The admin tokens file (`adminTokensFile`) as read at start; re-read on SIGHUP. */
  readonly adminTokensFile: AdminTokensFile | undefined;
  /**
   * The base URL agents use to download artifacts served by Control (default: the downloads
   * listener's URL when `downloads.addr` is set, else the admin server's).
   */
  readonly publicUrl: string | undefined;
  /** Artifact downloads (`/downloads/agent/{version}/{platform}`). */
  readonly downloads: {
    /** A listener of their own; undefined serves downloads on the admin port (as before). */
    readonly addr: ListenAddress | undefined;
    /**
     * Require a node credential (node token, or client certificate via `tls.downloads`).
     * Default: true when downloads are served off loopback (`downloads.addr`, else `adminAddr`).
     */
    readonly requireAuth: boolean;
    /** Downloads served at once; more are answered 503 with Retry-After. */
    readonly maxConcurrent: number;
    /**
     * Downloads one client (a node, or an unauthenticated client's address off loopback) is
     * served at once; more are answered 503 with Retry-After.
     */
    readonly maxPerClient: number;
    /** A download client that takes no bytes for this long is disconnected. */
    readonly stallTimeoutSeconds: number;
    /**
     * Connections the downloads listener (`addr`) holds at once; more are closed at accept,
     * so silent connections cannot use up Control's file descriptors.
     */
    readonly maxConnections: number;
  };
  readonly release: { readonly pins: readonly string[]; readonly threshold: number };
  /** The newest Agent version this Control supports, if limited. */
  readonly agent: { readonly maxVersion: string | undefined };
  readonly policy: {
    readonly minBatchDurationSeconds: number;
    readonly firstBatchMaxPercent: number;
    readonly maxBatches: number;
  };
  readonly timeouts: {
    readonly reconnectSeconds: number;
    readonly configGraceSeconds: number;
    readonly heartbeatSeconds: number;
    readonly offlineAfterSeconds: number;
    /**
     * How long a connection to the agent port may stay without an authenticated stream (TLS,
     * HTTP/2 preface, stream, credential) before it is closed (default 10).
     */
    readonly agentConnectionAuthSeconds: number;
  } & AdminTimeoutsConfig;
  readonly worker: {
    readonly intervalMs: number;
    /** How often the leader runs its fleet passes: desired-version convergence and rollout plans. */
    readonly convergenceIntervalMs: number;
  };
  /** `limits.*`: what one Control holds and accepts (config-limits.ts). */
  readonly limits: LimitsConfig;
  readonly log: { readonly level: string };
  /** Which Hello labels are trusted, and whether new nodes wait for approval. */
  readonly enrollment: EnrollmentConfig;
  /** TLS of the agent stream (optionally mTLS) and of the admin API; clear text when unset. */
  readonly tls: TlsConfig;
  /** The release channel's TUF repository, served at `/tuf/` beside the downloads. */
  readonly tuf: TufConfig | undefined;
  /** Which hosts a campaign's gates may name (`gates.allowedHosts`). */
  readonly gates: GatesConfig;
  /**
   * Allow clear text on a non-loopback agent, admin or downloads listener
   * (`AGENT_CONTROL_ALLOW_INSECURE`); Control then warns at start. Default false: it refuses.
   */
  readonly allowInsecure: boolean;
}

/** Thrown when the configuration is invalid; `problems` lists every bad value. */
export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`invalid configuration:\n  - ${problems.join("\n  - ")}`);
    this.name = "ConfigError";
  }
}

/** The environment variables Control reads (SPEC §7). */
export const CONFIG_ENV = [
  "DATABASE_URL",
  "AGENT_CONTROL_CONFIG",
  "AGENT_CONTROL_DATA_DIR",
  "AGENT_CONTROL_AGENT_ADDR",
  "AGENT_CONTROL_ADMIN_ADDR",
  "AGENT_CONTROL_ADMIN_TOKEN",
  "AGENT_CONTROL_RELEASE_PINS",
  "AGENT_CONTROL_RELEASE_THRESHOLD",
  "AGENT_CONTROL_PUBLIC_URL",
  "AGENT_CONTROL_ADMIN_TOKENS_FILE",
  "AGENT_CONTROL_DOWNLOADS_ADDR",
  "AGENT_CONTROL_DOWNLOADS_REQUIRE_AUTH",
  "AGENT_CONTROL_DOWNLOADS_MAX_CONCURRENT",
  "AGENT_CONTROL_LOG_LEVEL",
  "AGENT_CONTROL_MAX_STREAMS",
  "AGENT_CONTROL_ALLOW_INSECURE",
  ...(Object.keys(TLS_ENV) as (keyof typeof TLS_ENV)[]),
] as const;

type Env = Readonly<Record<string, string | undefined>>;

/** Options of {@link loadConfig}. */
export interface LoadConfigOptions {
  /** A config file path (`--config`); falls back to `AGENT_CONTROL_CONFIG`. */
  readonly file?: string | undefined;
  /** Environment variables (default `process.env`). */
  readonly env?: Env;
  /** Values that override file and env, for tests and embedding. */
  readonly overrides?: ConfigInput;
}

/**
 * Loads and validates the configuration. Precedence: overrides > env > file > defaults.
 * @throws ConfigError naming every invalid value.
 */
export function loadConfig(options: LoadConfigOptions = {}): ControlConfig {
  const env = options.env ?? process.env;
  const problems: string[] = [];
  const filePath = options.file ?? env.AGENT_CONTROL_CONFIG;
  let file: ConfigInput = {};
  if (filePath) {
    try {
      const parsed: unknown = JSON.parse(readFileSync(filePath, "utf8"));
      if (!isRecord(parsed)) problems.push(`config file ${filePath}: must hold a JSON object`);
      else {
        file = parsed;
        const exposed = configFileSecrets(parsed) && exposedFileProblem(filePath, "secrets");
        if (exposed) problems.push(`config file ${filePath}: ${exposed}`);
      }
    } catch (error) {
      problems.push(`config file ${filePath}: ${(error as Error).message}`);
    }
  }
  const merged = deepMerge(deepMerge(file, envInput(env)), options.overrides ?? {});
  const config = validate(merged, problems);
  if (problems.length > 0) throw new ConfigError(withSources(problems, env));
  return config;
}

function envInput(env: Env): ConfigInput {
  const input: ConfigInput = {};
  const set = (key: string, value: unknown) => {
    if (value !== undefined && value !== "") input[key] = value;
  };
  set("databaseUrl", env.DATABASE_URL);
  set("dataDir", env.AGENT_CONTROL_DATA_DIR);
  set("agentAddr", env.AGENT_CONTROL_AGENT_ADDR);
  set("adminAddr", env.AGENT_CONTROL_ADMIN_ADDR);
  set("adminToken", env.AGENT_CONTROL_ADMIN_TOKEN);
  set("adminTokensFile", env.AGENT_CONTROL_ADMIN_TOKENS_FILE);
  set("publicUrl", env.AGENT_CONTROL_PUBLIC_URL);
  set("allowInsecure", env.AGENT_CONTROL_ALLOW_INSECURE);
  const release: ConfigInput = {};
  if (env.AGENT_CONTROL_RELEASE_PINS) {
    release.pins = env.AGENT_CONTROL_RELEASE_PINS.split(",")
      .map((pin) => pin.trim())
      .filter((pin) => pin.length > 0);
  }
  if (env.AGENT_CONTROL_RELEASE_THRESHOLD) {
    release.threshold = env.AGENT_CONTROL_RELEASE_THRESHOLD;
  }
  if (Object.keys(release).length > 0) input.release = release;
  const downloads: ConfigInput = {};
  if (env.AGENT_CONTROL_DOWNLOADS_ADDR) downloads.addr = env.AGENT_CONTROL_DOWNLOADS_ADDR;
  if (env.AGENT_CONTROL_DOWNLOADS_REQUIRE_AUTH) {
    downloads.requireAuth = env.AGENT_CONTROL_DOWNLOADS_REQUIRE_AUTH;
  }
  if (env.AGENT_CONTROL_DOWNLOADS_MAX_CONCURRENT) {
    downloads.maxConcurrent = env.AGENT_CONTROL_DOWNLOADS_MAX_CONCURRENT;
  }
  if (Object.keys(downloads).length > 0) input.downloads = downloads;
  if (env.AGENT_CONTROL_LOG_LEVEL) input.log = { level: env.AGENT_CONTROL_LOG_LEVEL };
  if (env.AGENT_CONTROL_MAX_STREAMS) input.limits = { maxStreams: env.AGENT_CONTROL_MAX_STREAMS };
  const tls = tlsEnvInput(env);
  if (Object.keys(tls).length > 0) input.tls = tls;
  return input;
}

const KNOWN_KEYS = new Set([
  "dataDir",
  "databaseUrl",
  "agentAddr",
  "adminAddr",
  "adminSocket",
  "adminToken",
  "adminTokens",
  "adminTokensFile",
  "publicUrl",
  "downloads",
  "release",
  "agent",
  "policy",
  "timeouts",
  "worker",
  "limits",
  "log",
  "tls",
  "tuf",
  "gates",
  "enrollment",
  "allowInsecure",
]);

/** The settings under `policy`: any other key is refused. */
const POLICY_KEYS: ReadonlySet<string> = new Set([
  "minBatchDurationSeconds",
  "firstBatchMaxPercent",
  "maxBatches",
]);

function validate(input: ConfigInput, problems: string[]): ControlConfig {
  for (const key of Object.keys(input)) {
    if (!KNOWN_KEYS.has(key)) problems.push(`${key}: unknown setting`);
  }
  const v = new Reader(problems);
  const release = v.section(input, "release");
  const agent = v.section(input, "agent");
  const policy = v.section(input, "policy");
  for (const key of Object.keys(policy)) {
    if (!POLICY_KEYS.has(key)) {
      // SPEC §10's failure-domain budgets are future work: refused, never silently ignored.
      const why = key === "domains" ? " (failure-domain budgets are not built yet)" : "";
      problems.push(`policy.${key}: unknown setting${why}`);
    }
  }
  const timeouts = v.section(input, "timeouts");
  const worker = v.section(input, "worker");
  const limits = v.section(input, "limits");
  const log = v.section(input, "log");
  const downloads = v.section(input, "downloads");
  const tls = readTlsConfig(input.tls, problems);
  const adminAddr = v.address(input, "adminAddr", "127.0.0.1:7080");
  const downloadsAddr = v.optionalAddress(downloads, "downloads.addr");
  const maxConcurrent = v.integer(downloads, "downloads.maxConcurrent", 64, 1, 100_000);
  const dataDir = v.string(input, "dataDir", ".data");
  const config: ControlConfig = {
    dataDir,
    databaseUrl: v.optionalUrl(input, "databaseUrl", ["postgres:", "postgresql:"]),
    agentAddr: v.address(input, "agentAddr", defaultAgentAddr(tls.agent !== undefined)),
    adminAddr,
    adminSocket: readAdminSocket(input, dataDir, problems),
    ...readAdminAccess(input, problems),
    publicUrl: v.optionalUrl(input, "publicUrl", ["http:", "https:"]),
    downloads: {
      addr: downloadsAddr,
      // Off loopback, a node credential by default: downloads face the fleet's network.
      requireAuth: v.boolean(
        downloads,
        "downloads.requireAuth",
        !isLoopbackHost((downloadsAddr ?? adminAddr).host),
      ),
      maxConcurrent,
      maxPerClient: v.integer(downloads, "downloads.maxPerClient", 2, 1, 100_000),
      stallTimeoutSeconds: v.number(downloads, "downloads.stallTimeoutSeconds", 60, 1, 3600),
      maxConnections: v.integer(downloads, "downloads.maxConnections", 1024, 1, 1_000_000),
    },
    release: {
      pins: v.stringList(release, "release.pins"),
      threshold: v.integer(release, "release.threshold", 1, 1, 100),
    },
    agent: { maxVersion: v.optionalSemver(agent, "agent.maxVersion") },
    policy: {
      minBatchDurationSeconds: v.integer(policy, "policy.minBatchDurationSeconds", 1800, 0, 604800),
      firstBatchMaxPercent: v.integer(policy, "policy.firstBatchMaxPercent", 5, 1, 100),
      maxBatches: v.integer(policy, "policy.maxBatches", 10, 1, 100),
    },
    timeouts: {
      reconnectSeconds: v.integer(timeouts, "timeouts.reconnectSeconds", 600, 1, 86400),
      configGraceSeconds: v.integer(timeouts, "timeouts.configGraceSeconds", 60, 0, 86400),
      heartbeatSeconds: v.number(timeouts, "timeouts.heartbeatSeconds", 10, 0.05, 3600),
      offlineAfterSeconds: v.number(timeouts, "timeouts.offlineAfterSeconds", 120, 0.1, 86400),
      agentConnectionAuthSeconds: v.number(
        timeouts,
        "timeouts.agentConnectionAuthSeconds",
        10,
        0.1,
        3600,
      ),
      ...readAdminTimeouts(v, timeouts, problems),
    },
    worker: {
      intervalMs: v.integer(worker, "worker.intervalMs", 5000, 10, 3_600_000),
      convergenceIntervalMs: v.integer(
        worker,
        "worker.convergenceIntervalMs",
        30_000,
        100,
        3_600_000,
      ),
    },
    limits: readLimits(v, limits, problems),
    log: { level: v.oneOf(log, "log.level", "info", LOG_LEVELS) },
    tuf: readTufConfig(input.tuf, problems),
    gates: readGatesConfig(input.gates, problems),
    tls,
    enrollment: readEnrollment(input, problems),
    allowInsecure: v.boolean(input, "allowInsecure", false),
  };
  checkDownloads(config, downloads, problems);
  checkStreamBurst(config.limits, problems);
  if (!config.allowInsecure) {
    const problem = clearTextProblem(clearTextExposed(listenerFacts(config)));
    if (problem) problems.push(problem);
  }
  checkReleasePins(config.release, problems);
  checkDataDir(config.dataDir, !config.databaseUrl, problems);
  return config;
}

/**
 * The listeners of `config` for the clear-text check (config-clear-text.ts): the agent
 * stream, the admin API and the downloads listener, which carry bearer credentials (node
 * tokens with every download off loopback, by default).
 */
export function listenerFacts(config: ControlConfig): ListenerFacts[] {
  const facts: ListenerFacts[] = [
    { name: "agentAddr", tlsSetting: "tls.agent", addr: config.agentAddr, tls: !!config.tls.agent },
    { name: "adminAddr", tlsSetting: "tls.admin", addr: config.adminAddr, tls: !!config.tls.admin },
  ];
  if (config.downloads.addr) {
    facts.push({
      name: "downloads.addr",
      tlsSetting: "tls.downloads",
      addr: config.downloads.addr,
      tls: !!config.tls.downloads,
    });
  }
  return facts;
}

/** Cross-checks of the downloads settings that no single value shows. */
function checkDownloads(config: ControlConfig, input: ConfigInput, problems: string[]): void {
  for (const key of Object.keys(input)) {
    if (
      ![
        "addr",
        "requireAuth",
        "maxConcurrent",
        "maxPerClient",
        "stallTimeoutSeconds",
        "maxConnections",
      ].includes(key)
    ) {
      problems.push(`downloads.${key}: unknown setting`);
    }
  }
  const addr = config.downloads.addr;
  if (!addr) {
    if (config.tls.downloads) {
      problems.push(
        "tls.downloads: needs downloads.addr (without it, downloads are served on the admin port, with tls.admin)",
      );
    }
    return;
  }
  for (const [name, other] of [
    ["adminAddr", config.adminAddr],
    ["agentAddr", config.agentAddr],
  ] as const) {
    if (addr.port !== 0 && addr.port === other.port && sameHost(addr.host, other.host)) {
      problems.push(`downloads.addr: port ${addr.port} is already taken by ${name}`);
    }
  }
}

function sameHost(a: string, b: string): boolean {
  const wildcard = (host: string) => host === "0.0.0.0" || host === "::";
  return a === b || wildcard(a) || wildcard(b);
}

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

function deepMerge(base: ConfigInput, over: ConfigInput): ConfigInput {
  const out: ConfigInput = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const current = out[key];
    out[key] = isRecord(current) && isRecord(value) ? deepMerge(current, value) : value;
  }
  return out;
}
