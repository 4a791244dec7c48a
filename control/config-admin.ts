/**
 * The admin listener's limits in the config: `limits.admin*` (connections, request body
 * bytes) and `timeouts.admin*` (headers, request, keep-alive, HTTP/2 idle), read and
 * cross-checked in one place.
 */
import { Buffer } from "node:buffer";
import { resolve } from "node:path";
import type { ConfigInput, Reader } from "./config-reader.js";
import { adminSocketOf, UNIX_SOCKET_PATH_MAX } from "./shared/local-endpoint.js";

/** `limits.admin*`: what the admin listener holds at once. */
export interface AdminLimitsConfig {
  /** Connections open at once on the admin port (downloads served there count too). */
  readonly adminMaxConnections: number;
  /**
   * Connections one remote address (an IPv6 /64) holds at once on the admin TCP port (default
   * 256, at most `adminMaxConnections`); the next is closed at accept. Raise it for a proxy
   * that brings every client from one address.
   */
  readonly adminConnectionsPerAddress: number;
  /** The largest request body of every admin RPC but `RegisterRelease`. */
  readonly adminRequestBytes: number;
  /** The largest `RegisterRelease` body (envelope and artifact files; operators only). */
  readonly adminReleaseBytes: number;
  /** Request-body bytes all admin requests together may hold while being read. */
  readonly adminBytesInFlight: number;
}

/** `timeouts.admin*`: how long the admin listener waits for a client. */
export interface AdminTimeoutsConfig {
  /** For a request's headers (and a new connection's first bytes or HTTP/2 stream). */
  readonly adminHeadersSeconds: number;
  /** For a whole request, body included. */
  readonly adminRequestSeconds: number;
  /** An HTTP/1.1 connection idle between requests. */
  readonly adminKeepAliveSeconds: number;
  /** An HTTP/2 session with no open stream and no traffic. */
  readonly adminIdleSeconds: number;
}

const MiB = 1024 * 1024;

/** Reads `limits.admin*`; `problems` gets each bad value and each bad combination. */
export function readAdminLimits(
  v: Reader,
  limits: ConfigInput,
  problems: string[],
): AdminLimitsConfig {
  const requestBytes = v.integer(limits, "limits.adminRequestBytes", MiB, 1024, 64 * MiB);
  const releaseBytes = v.integer(limits, "limits.adminReleaseBytes", 256 * MiB, MiB, 1024 * MiB);
  const inFlight = v.integer(
    limits,
    "limits.adminBytesInFlight",
    2 * Math.max(requestBytes, releaseBytes),
    MiB,
    8192 * MiB,
  );
  if (inFlight < Math.max(requestBytes, releaseBytes)) {
    problems.push(
      `limits.adminBytesInFlight: ${inFlight} must be at least limits.adminReleaseBytes and limits.adminRequestBytes (${Math.max(requestBytes, releaseBytes)})`,
    );
  }
  const maxConnections = v.integer(limits, "limits.adminMaxConnections", 4096, 1, 1_000_000);
  const perAddress = v.integer(limits, "limits.adminConnectionsPerAddress", 256, 1, 1_000_000);
  return {
    adminMaxConnections: maxConnections,
    adminConnectionsPerAddress: Math.min(perAddress, maxConnections),
    adminRequestBytes: requestBytes,
    adminReleaseBytes: releaseBytes,
    adminBytesInFlight: inFlight,
  };
}

/** Reads `timeouts.admin*`; `problems` gets each bad value and each bad combination. */
export function readAdminTimeouts(
  v: Reader,
  timeouts: ConfigInput,
  problems: string[],
): AdminTimeoutsConfig {
  const headers = v.number(timeouts, "timeouts.adminHeadersSeconds", 15, 0.1, 600);
  const request = v.number(timeouts, "timeouts.adminRequestSeconds", 300, 0.1, 86400);
  if (request < headers) {
    problems.push(
      `timeouts.adminRequestSeconds: ${request} must be at least timeouts.adminHeadersSeconds (${headers})`,
    );
  }
  return {
    adminHeadersSeconds: headers,
    adminRequestSeconds: request,
    adminKeepAliveSeconds: v.number(timeouts, "timeouts.adminKeepAliveSeconds", 65, 0.1, 3600),
    adminIdleSeconds: v.number(timeouts, "timeouts.adminIdleSeconds", 300, 0.1, 86400),
  };
}

/**
 * The admin server's limits (control/admin/server.ts `AdminLimits`) from the validated
 * config, in bytes and milliseconds.
 */
export function adminServerLimits(config: {
  readonly limits: AdminLimitsConfig;
  readonly timeouts: AdminTimeoutsConfig;
}) {
  const { limits, timeouts } = config;
  return {
    maxConnections: limits.adminMaxConnections,
    connectionsPerAddress: limits.adminConnectionsPerAddress,
    requestBytes: limits.adminRequestBytes,
    releaseBytes: limits.adminReleaseBytes,
    bytesInFlight: limits.adminBytesInFlight,
    headersTimeoutMs: timeouts.adminHeadersSeconds * 1000,
    requestTimeoutMs: timeouts.adminRequestSeconds * 1000,
    bodyTimeoutMs: timeouts.adminRequestSeconds * 1000,
    keepAliveTimeoutMs: timeouts.adminKeepAliveSeconds * 1000,
    idleTimeoutMs: timeouts.adminIdleSeconds * 1000,
  };
}

/**
 * `adminSocket`: the admin API's Unix socket (control/admin/admin-socket.ts), an absolute path;
 * default `<dataDir>/control-run/admin.sock`. It must fit a Unix socket address.
 */
export function readAdminSocket(input: ConfigInput, dataDir: string, problems: string[]): string {
  const given = input.adminSocket;
  if (given !== undefined && (typeof given !== "string" || given === "")) {
    problems.push("adminSocket: must be a file path");
  }
  const path = typeof given === "string" && given !== "" ? resolve(given) : adminSocketOf(dataDir);
  const bytes = Buffer.byteLength(path);
  if (bytes > UNIX_SOCKET_PATH_MAX) {
    const why = given === undefined ? `, the default in the data directory ${dataDir},` : "";
    problems.push(
      `adminSocket: ${path}${why} would be ${bytes} bytes long, over the ${UNIX_SOCKET_PATH_MAX} bytes a socket path may have; fix: set adminSocket to a shorter path (e.g. /run/agent-control/admin.sock) or use a shorter data directory`,
    );
  }
  return path;
}
