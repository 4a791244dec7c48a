/**
 * How agentctl reaches Control: which server and token it uses (flags, environment, then
 * the local admin-token file), the Connect clients of the admin API, and the one table
 * that turns any failure into the single line agentctl prints.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  type Client,
  Code,
  ConnectError,
  createClient,
  type Interceptor,
} from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { AuditService } from "../proto/gen/agentcontrol/admin/v1/audit_pb.js";
import { CampaignService } from "../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { NodeService } from "../proto/gen/agentcontrol/admin/v1/node_pb.js";
import { ReleaseService } from "../proto/gen/agentcontrol/admin/v1/release_pb.js";
import { UsageError } from "./args.js";

/** The server agentctl talks to when neither `--server` nor `AGENTCTL_SERVER` is set. */
export const DEFAULT_SERVER = "http://127.0.0.1:7080";
/** The data directory when neither `--data-dir` nor `AGENT_CONTROL_DATA_DIR` is set. */
export const DEFAULT_DATA_DIR = ".data";

/** Where agentctl connects and with which credential, and where each came from. */
export interface Connection {
  /** Base URL of the admin API, without a trailing slash. */
  readonly server: string;
  readonly token: string | undefined;
  readonly tokenSource: "flag" | "env" | "file" | "none";
  /** Directory whose `admin-token` file is the local fallback credential. */
  readonly dataDir: string;
}

/** Inputs to {@link resolveConnection}; `readToken` reads the admin-token file (or undefined). */
export interface ConnectionInputs {
  readonly server?: string | undefined;
  readonly token?: string | undefined;
  readonly dataDir?: string | undefined;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly readToken?: (path: string) => string | undefined;
}

/**
 * Chooses server and token: flag, then environment, then default. The admin-token file
 * under the data directory is read only when the server is on this machine (127.0.0.1,
 * localhost or ::1), so a local operator token never travels to another host.
 */
export function resolveConnection(inputs: ConnectionInputs): Connection {
  const server = normaliseServer(inputs.server ?? inputs.env.AGENTCTL_SERVER ?? DEFAULT_SERVER);
  const dataDir = inputs.dataDir ?? inputs.env.AGENT_CONTROL_DATA_DIR ?? DEFAULT_DATA_DIR;
  const base = { server, dataDir };
  if (inputs.token !== undefined && inputs.token !== "") {
    return { ...base, token: inputs.token, tokenSource: "flag" };
  }
  const envToken = inputs.env.AGENTCTL_TOKEN;
  if (envToken !== undefined && envToken !== "") {
    return { ...base, token: envToken, tokenSource: "env" };
  }
  if (isLocalServer(server)) {
    const fileToken = (inputs.readToken ?? readTokenFile)(join(dataDir, "admin-token"));
    if (fileToken !== undefined && fileToken !== "") {
      return { ...base, token: fileToken, tokenSource: "file" };
    }
  }
  return { ...base, token: undefined, tokenSource: "none" };
}

function normaliseServer(text: string): string {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `http://${text}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new UsageError(`invalid server "${text}": expected a URL such as ${DEFAULT_SERVER}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new UsageError(`invalid server "${text}": use http:// or https://`);
  }
  return url.href.replace(/\/+$/, "");
}

/** True when the server URL names this machine by loopback address or `localhost`. */
export function isLocalServer(server: string): boolean {
  const host = new URL(server).hostname;
  return host === "127.0.0.1" || host === "localhost" || host === "[::1]" || host === "::1";
}

function readTokenFile(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8").trim();
  } catch {
    return undefined;
  }
}

/** The Connect clients of the admin API. */
export interface AdminClients {
  readonly nodes: Client<typeof NodeService>;
  readonly releases: Client<typeof ReleaseService>;
  readonly campaigns: Client<typeof CampaignService>;
  readonly audit: Client<typeof AuditService>;
}

/** Remembers the last method called, so a refusal can say what was refused. */
export interface CallState {
  method: string | undefined;
}

/**
 * Creates the admin clients over Connect on HTTP/1.1, sending the token as a bearer
 * credential on every call and recording each method's name in `state`.
 */
export function createAdminClients(connection: Connection, state: CallState): AdminClients {
  const bearer: Interceptor = (next) => async (req) => {
    state.method = req.method.name;
    if (connection.token !== undefined)
      req.header.set("authorization", `Bearer ${connection.token}`);
    return await next(req);
  };
  const transport = createConnectTransport({
    baseUrl: connection.server,
    httpVersion: "1.1",
    interceptors: [bearer],
  });
  return {
    nodes: createClient(NodeService, transport),
    releases: createClient(ReleaseService, transport),
    campaigns: createClient(CampaignService, transport),
    audit: createClient(AuditService, transport),
  };
}

/** What a refused call was trying to do, by RPC name, for "this token's role cannot …". */
const ACTIONS: Readonly<Record<string, string>> = {
  ListNodes: "list nodes",
  GetNode: "read nodes",
  DisableNode: "disable nodes",
  EnableNode: "enable nodes",
  CreateJoinToken: "create join tokens",
  ListJoinTokens: "list join tokens",
  RevokeJoinToken: "revoke join tokens",
  RegisterRelease: "register releases",
  ListReleases: "list releases",
  GetRelease: "read releases",
  PlanCampaign: "plan campaigns",
  StartCampaign: "start campaigns",
  ListCampaigns: "list campaigns",
  GetCampaign: "read campaigns",
  PauseCampaign: "pause campaigns",
  ResumeCampaign: "resume campaigns",
  AbortCampaign: "abort campaigns",
  RetryCampaign: "retry campaigns",
  WatchCampaign: "watch campaigns",
  ListAuditEvents: "read the audit log",
};

const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EPIPE",
]);

/** Context {@link describeError} needs to make its line actionable. */
export interface ErrorContext {
  readonly connection?: Connection | undefined;
  readonly method?: string | undefined;
}

/**
 * Turns any error into the one line agentctl prints after `agentctl: `. Connect codes
 * get advice (how to authenticate, which role is missing, which server was unreachable);
 * otherwise the server's own message is passed through.
 */
export function describeError(error: unknown, context: ErrorContext = {}): string {
  return oneLine(describe(error, context));
}

function describe(error: unknown, context: ErrorContext): string {
  if (error instanceof UsageError) return error.message;
  if (error instanceof ConnectError) return describeConnectError(error, context);
  const fsError = describeFsError(error);
  if (fsError !== undefined) return fsError;
  if (error instanceof Error) {
    const reason = (error as { reason?: unknown }).reason;
    return typeof reason === "string" && error.name === "ReleaseError"
      ? `${error.message} (${reason})`
      : error.message;
  }
  return String(error);
}

function describeConnectError(error: ConnectError, context: ErrorContext): string {
  const server = context.connection?.server ?? "the server";
  const dataDir = context.connection?.dataDir ?? DEFAULT_DATA_DIR;
  const raw = error.rawMessage;
  const network = networkCode(error);
  if (network !== undefined || error.code === Code.Unavailable) {
    return `cannot reach Control at ${server}: ${raw !== "" ? raw : (network ?? "unavailable")}`;
  }
  switch (error.code) {
    case Code.Unauthenticated: {
      const rejected =
        context.connection !== undefined && context.connection.tokenSource !== "none"
          ? `the ${tokenOrigin(context.connection)} was rejected; `
          : "";
      return `not authenticated: ${rejected}pass --token or set AGENTCTL_TOKEN (the operator token is in ${join(dataDir, "admin-token")})`;
    }
    case Code.PermissionDenied: {
      const action = ACTIONS[context.method ?? ""] ?? "make this call";
      return `permission denied: this token's role cannot ${action}${raw !== "" ? ` (${raw})` : ""}`;
    }
    case Code.DeadlineExceeded:
      return `Control at ${server} did not answer in time: ${raw}`;
    case Code.Unimplemented:
      return `Control at ${server} does not offer ${context.method ?? "this call"} (is it an Agent Control admin API of a matching version?): ${raw}`;
    case Code.Canceled:
      return "canceled";
    case Code.Internal:
      return `Control failed: ${raw !== "" ? raw : "internal error"}`;
    default:
      return raw !== "" ? raw : Code[error.code];
  }
}

function tokenOrigin(connection: Connection): string {
  switch (connection.tokenSource) {
    case "flag":
      return "token given with --token";
    case "env":
      return "token in AGENTCTL_TOKEN";
    case "file":
      return `token in ${join(connection.dataDir, "admin-token")}`;
    case "none":
      return "token";
  }
}

function networkCode(error: unknown): string | undefined {
  const seen = new Set<unknown>();
  let current: unknown = error;
  while (current instanceof Error && !seen.has(current)) {
    seen.add(current);
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && NETWORK_CODES.has(code)) return code;
    const inner = (current as { errors?: unknown }).errors;
    if (Array.isArray(inner)) {
      for (const e of inner) {
        const c = (e as { code?: unknown }).code;
        if (typeof c === "string" && NETWORK_CODES.has(c)) return c;
      }
    }
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

function describeFsError(error: unknown): string | undefined {
  if (!(error instanceof Error)) return undefined;
  const { code, path } = error as { code?: unknown; path?: unknown };
  if (typeof code !== "string" || typeof path !== "string") return undefined;
  switch (code) {
    case "ENOENT":
      return `no such file or directory: ${path}`;
    case "EACCES":
    case "EPERM":
      return `permission denied: ${path}`;
    case "EEXIST":
      return `already exists: ${path}`;
    case "EISDIR":
      return `is a directory: ${path}`;
    default:
      return `${error.message}`;
  }
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, "; ").trim();
}
