/**
 * The one table that turns any failure into the single line agentctl prints after
 * `agentctl: `: Connect codes get advice (how to authenticate, which role is missing,
 * which server was unreachable); otherwise the server's own message is passed through.
 * The error's `google.rpc.ErrorInfo`, when Control sent one, follows in brackets.
 */
import { join } from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { ErrorInfoSchema } from "../proto/gen/google/rpc/error_details_pb.js";
import { noControlLine } from "./admin-socket.js";
import { UsageError } from "./args.js";
import { type Connection, isLocalServer } from "./client.js";
import { speaksTls } from "./tls-probe.js";

/** What a refused call was trying to do, by RPC name, for "this token's role cannot …". */
const ACTIONS: Readonly<Record<string, string>> = {
  ListNodes: "list nodes",
  GetNode: "read nodes",
  DisableNode: "disable nodes",
  EnableNode: "enable nodes",
  ResetNode: "reset nodes",
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
  ListCampaignNodes: "read campaigns",
  PauseCampaign: "pause campaigns",
  ResumeCampaign: "resume campaigns",
  AbortCampaign: "abort campaigns",
  RetryCampaign: "retry campaigns",
  WatchCampaign: "watch campaigns",
  SkipGate: "skip gates",
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

/** The connection ended under the request: what a TLS port does with clear text. */
const LOWER_LAYER_CODES = new Set(["ECONNRESET", "EPIPE"]);

/** Node.js's codes for a server certificate this client does not trust. */
const UNTRUSTED_CERTIFICATE_CODES = new Set([
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "CERT_UNTRUSTED",
  "CERT_SIGNATURE_FAILURE",
]);

/** The message Control sends with every internal error (control/errors.ts). */
const CONTROL_INTERNAL_MESSAGE = "internal error; the detail is in Control's log";
const INTERNAL_LINE = "internal error (see Control's log)";

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

/**
 * {@link describeError}, except that a call to an `http://` server that failed below HTTP
 * (the connection reset, or an answer that is no HTTP) is checked for a TLS port: then the
 * line says to use `https://` ({@link speaksTls}).
 */
export async function describeFailure(error: unknown, context: ErrorContext = {}): Promise<string> {
  const server = context.connection?.server ?? "";
  if (
    server.startsWith("http://") &&
    context.connection?.socketPath === undefined &&
    error instanceof ConnectError &&
    belowHttp(error) &&
    (await speaksTls(server))
  ) {
    const https = `https://${server.slice("http://".length)}`;
    return `Control at ${server} speaks TLS: use ${https} (--server or AGENTCTL_SERVER)`;
  }
  return describeError(error, context);
}

/** A failure of the connection or of HTTP itself, not an answer Control gave. */
function belowHttp(error: ConnectError): boolean {
  if (causeCode(error, LOWER_LAYER_CODES) !== undefined) return true;
  const seen = new Set<unknown>();
  let current: unknown = error;
  while (current instanceof Error && !seen.has(current)) {
    seen.add(current);
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && code.startsWith("HPE_")) return true;
    if (current.message.includes("socket hang up")) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
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
  return `${describeConnectCode(error, context)}${errorInfoSuffix(error)}`;
}

/**
 * The `google.rpc.ErrorInfo` of an error as ` [REASON key=value …]`: its reason when it says
 * more than the status code (`NODE_BUSY` rather than FAILED_PRECONDITION) and its metadata,
 * keys sorted (the busy campaigns and nodes, the invalid field, the missing role). Empty
 * when the error carries none, or nothing the status code does not already say.
 */
export function errorInfoSuffix(error: ConnectError): string {
  const info = error.findDetails(ErrorInfoSchema)[0];
  if (info === undefined) return "";
  const codeName = Code[error.code]?.replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase();
  const parts = info.reason !== "" && info.reason !== codeName ? [info.reason] : [];
  for (const key of Object.keys(info.metadata).sort()) {
    parts.push(`${key}=${info.metadata[key]}`);
  }
  return parts.length === 0 ? "" : ` [${parts.join(" ")}]`;
}

/** A socket that is absent, or that nothing listens on. */
const NO_SOCKET_CODES = new Set(["ENOENT", "ECONNREFUSED"]);

function describeConnectCode(error: ConnectError, context: ErrorContext): string {
  const connection = context.connection;
  const socketPath = connection?.socketPath;
  const server =
    socketPath !== undefined ? `unix:${socketPath}` : (connection?.server ?? "the server");
  const dataDir = connection?.dataDir ?? ".data";
  const raw = error.rawMessage;
  if (
    socketPath !== undefined &&
    connection?.tokenSource === "file" &&
    (causeCode(error, NO_SOCKET_CODES) !== undefined ||
      raw === noControlLine(dataDir, socketPath, join(dataDir, "admin-token")))
  ) {
    return noControlLine(dataDir, socketPath, join(dataDir, "admin-token"));
  }
  if (causeCode(error, UNTRUSTED_CERTIFICATE_CODES) !== undefined) {
    return `cannot trust Control at ${server}: ${raw} (a private CA? pass --ca-file FILE or set AGENTCTL_CA_FILE)`;
  }
  const network = networkCode(error);
  if (network !== undefined || error.code === Code.Unavailable) {
    return `cannot reach Control at ${server}: ${raw !== "" ? raw : (network ?? "unavailable")}`;
  }
  switch (error.code) {
    case Code.Unauthenticated: {
      // The server's reason ("unknown admin token", "token expired at …") helps once a
      // token was sent; without one it only repeats that none was.
      const rejected =
        context.connection !== undefined && context.connection.tokenSource !== "none"
          ? `the ${tokenOrigin(context.connection)} was rejected${raw !== "" ? ` (${raw})` : ""}; `
          : "";
      // A token the user gave was refused, and no data directory is known: where a local
      // Control might keep its token is a guess that only buries the reason.
      const given = context.connection?.tokenSource;
      if ((given === "flag" || given === "env") && context.connection?.dataDirSource === "guess") {
        return `not authenticated: ${rejected}pass a valid token with --token or AGENTCTL_TOKEN`;
      }
      return `not authenticated: ${rejected}pass --token or set AGENTCTL_TOKEN (${whereTokenIs(context.connection, dataDir)})`;
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
    case Code.Internal: {
      // Control sends no detail of an internal error (it logs it with its cause); the line
      // names the request, so the operator knows what to look for in Control's log.
      const what = raw === "" || raw === CONTROL_INTERNAL_MESSAGE ? INTERNAL_LINE : raw;
      return `${context.method ?? "Control"} failed: ${what}`;
    }
    default:
      return raw !== "" ? raw : Code[error.code];
  }
}

/**
 * Where the operator token is, as far as agentctl knows: the file in a data directory it was
 * given or that a Control running here noted; otherwise no guessed path (Control may run
 * elsewhere, with its own AGENT_CONTROL_DATA_DIR).
 */
function whereTokenIs(connection: Connection | undefined, dataDir: string): string {
  if (connection === undefined || connection.dataDirSource !== "guess") {
    return `the operator token is in ${join(dataDir, "admin-token")}`;
  }
  if (!isLocalServer(connection.server)) {
    return `the operator token is in admin-token in the data directory of Control at ${connection.server}, on its host`;
  }
  return `no Control started here noted ${connection.server}: the operator token is in admin-token in its data directory, AGENT_CONTROL_DATA_DIR where it runs; pass --data-dir DIR`;
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
  return causeCode(error, NETWORK_CODES);
}

/** The first `code` among `codes` in the error's chain of causes (and aggregated errors). */
function causeCode(error: unknown, codes: ReadonlySet<string>): string | undefined {
  const seen = new Set<unknown>();
  let current: unknown = error;
  while (current instanceof Error && !seen.has(current)) {
    seen.add(current);
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && codes.has(code)) return code;
    const inner = (current as { errors?: unknown }).errors;
    if (Array.isArray(inner)) {
      for (const e of inner) {
        const c = (e as { code?: unknown }).code;
        if (typeof c === "string" && codes.has(c)) return c;
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

/**
 * The message field of a response that Control always sets.
 * @throws Error naming the field when the answer lacks it (a Control that does not keep
 * its own API's promise), rather than printing an empty result.
 */
export function answered<T>(value: T | undefined, field: string): T {
  if (value === undefined) throw new Error(`Control's answer has no ${field}`);
  return value;
}
