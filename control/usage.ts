/**
 * What `npm start -- --help` prints: the flags, and every environment variable Control reads
 * with its default and meaning (README.md's configuration table says more about each).
 */

/** Each environment variable Control reads: `[name, default, meaning]`, in README order. */
export const ENVIRONMENT: readonly (readonly [string, string, string])[] = [
  [
    "DATABASE_URL",
    "embedded",
    "PostgreSQL >= 14; otherwise the embedded server under the data dir",
  ],
  ["AGENT_CONTROL_CONFIG", "none", "the JSON config file (like --config)"],
  ["AGENT_CONTROL_DATA_DIR", ".data", "embedded database, generated secrets, admin-endpoint.json"],
  [
    "AGENT_CONTROL_AGENT_ADDR",
    "127.0.0.1:7443",
    "the Agent stream (gRPC over HTTP/2); 0.0.0.0:7443 once agent TLS is configured",
  ],
  [
    "AGENT_CONTROL_ALLOW_INSECURE",
    "false",
    "true: allow clear text on a non-loopback agent or admin address (warns at start)",
  ],
  ["AGENT_CONTROL_ADMIN_ADDR", "127.0.0.1:7080", "admin API, health, metrics, downloads"],
  ["AGENT_CONTROL_ADMIN_TOKEN", "generated", "the operator token (else <data dir>/admin-token)"],
  ["AGENT_CONTROL_ADMIN_TOKENS_FILE", "none", "more admin tokens; re-read on SIGHUP"],
  ["AGENT_CONTROL_RELEASE_PINS", "none", "comma-separated ed25519 keys allowed to sign releases"],
  ["AGENT_CONTROL_RELEASE_THRESHOLD", "1", "how many distinct pinned keys must sign"],
  ["AGENT_CONTROL_PUBLIC_URL", "downloads or admin URL", "base URL Agents download from"],
  ["AGENT_CONTROL_DOWNLOADS_ADDR", "none", "a listener of its own for /downloads/"],
  ["AGENT_CONTROL_DOWNLOADS_REQUIRE_AUTH", "false", "downloads need the node's credential"],
  ["AGENT_CONTROL_DOWNLOADS_MAX_CONCURRENT", "64", "downloads served at once"],
  ["AGENT_CONTROL_DOWNLOADS_TLS_CERT", "none", "PEM chain: downloads over HTTPS (with _KEY)"],
  ["AGENT_CONTROL_DOWNLOADS_TLS_KEY", "none", "PEM key of the downloads certificate"],
  [
    "AGENT_CONTROL_DOWNLOADS_TLS_CLIENT_CA",
    "the agent CA",
    "CA of Agents' download client certificates",
  ],
  ["AGENT_CONTROL_MAX_STREAMS", "from open-file limit", "Agent streams held at once"],
  ["AGENT_CONTROL_AGENT_TLS_CERT", "none", "PEM chain: the Agent stream over TLS (with _KEY)"],
  ["AGENT_CONTROL_AGENT_TLS_KEY", "none", "PEM key of the Agent stream certificate"],
  ["AGENT_CONTROL_AGENT_TLS_CLIENT_CA", "none", "CA of Agents' client certificates (mTLS)"],
  ["AGENT_CONTROL_AGENT_TLS_REQUIRE_CLIENT_CERT", "true with a CA", "false also admits tokens"],
  ["AGENT_CONTROL_ADMIN_TLS_CERT", "none", "PEM chain: the admin port over HTTPS (with _KEY)"],
  ["AGENT_CONTROL_ADMIN_TLS_KEY", "none", "PEM key of the admin certificate"],
  ["AGENT_CONTROL_LOG_LEVEL", "info", "trace, debug, info, warn, error, fatal or silent"],
];

const width = Math.max(...ENVIRONMENT.map(([name]) => name.length));

/** The whole `--help` text, ending in a newline. */
export const USAGE = `Usage: npm start [-- --config FILE] [--workers N]

Runs Agent Control. Settings come from the config file (--config or AGENT_CONTROL_CONFIG)
and these environment variables, which win over the file; a bad one exits 2 before anything
starts. Logs go to stdout as JSON lines. SIGHUP re-reads the admin tokens file. See README.md.

--config FILE   the JSON config file
--workers N     N Control processes on this machine sharing the agent, admin and downloads
                ports (node:cluster); the primary owns the embedded PostgreSQL and restarts
                a worker that dies
-h, --help      this text

Environment:
${ENVIRONMENT.map(([name, fallback, meaning]) => `  ${name.padEnd(width)}  ${meaning} (default: ${fallback})`).join("\n")}
`;
