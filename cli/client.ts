/**
 * How agentctl reaches Control: which server and token it uses (flags, environment, then
 * the local admin-token file) and the Connect clients of the admin API. Loaded only by
 * commands that talk to a server, so offline commands never pay for the transport.
 */
import { readFileSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { rootCertificates } from "node:tls";
import {
  type Client,
  Code,
  ConnectError,
  createClient,
  type Interceptor,
} from "@connectrpc/connect";
import { ADMIN_SOCKET_DIR, ADMIN_SOCKET_FILE } from "../control/shared/local-endpoint.js";
import { AuditService } from "../proto/gen/agentcontrol/admin/v1/audit_pb.js";
import { CampaignService } from "../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { CampaignWaitsService } from "../proto/gen/agentcontrol/admin/v1/campaign_waits_pb.js";
import { NodeService } from "../proto/gen/agentcontrol/admin/v1/node_pb.js";
import { ReleaseService } from "../proto/gen/agentcontrol/admin/v1/release_pb.js";
import {
  DesiredVersionService,
  PlanService,
} from "../proto/gen/agentcontrol/admin/v1/rollout_pb.js";
import { VersionService } from "../proto/gen/agentcontrol/admin/v1/version_pb.js";
import { checkAdminSocket, localAdminSocket, noControlLine } from "./admin-socket.js";
import { adminTransport, type UploadWatch } from "./admin-transport.js";
import { checkClearTextToken, checkToken, parseServerUrl } from "./args.js";
import { readCaFile } from "./ca-file.js";
import { withDeadline } from "./deadline-transport.js";
import {
  DEFAULT_DATA_DIR,
  findLocalDataDir,
  findNotedDataDir,
  findSocketDataDir,
} from "./local-control.js";

/** The server agentctl talks to when neither `--server` nor `AGENTCTL_SERVER` is set. */
export const DEFAULT_SERVER = "http://127.0.0.1:7080";
/** The data directory when neither `--data-dir` nor `AGENT_CONTROL_DATA_DIR` is set. */
export { DEFAULT_DATA_DIR } from "./local-control.js";

/** Where agentctl connects and with which credential, and where each came from. */
export interface Connection {
  /** Base URL of the admin API, without a trailing slash, or `unix:<absolute path>`. */
  readonly server: string;
  /**
   * The admin Unix socket every call goes over instead of `server`'s TCP address: the one of
   * `--server unix:PATH`, or, when the token is the local token file, the socket of the data
   * directory it came from (that token is never sent over TCP).
   */
  readonly socketPath?: string;
  readonly token: string | undefined;
  readonly tokenSource: "flag" | "env" | "file" | "none";
  /** PEM CA certificates trusted for an `https://` server (`--ca-file`, `AGENTCTL_CA_FILE`). */
  readonly ca?: Buffer;
  /** Directory whose `admin-token` file is the local fallback credential. */
  readonly dataDir: string;
  /**
   * How agentctl knows `dataDir`: given (`--data-dir`, `AGENT_CONTROL_DATA_DIR`), noted by a
   * Control running on this machine for the server's port, or only the default guess (a
   * remote server, or a local port no Control here noted). Absent: given.
   */
  readonly dataDirSource?: "given" | "noted" | "guess";
}

/** Inputs to {@link resolveConnection}; `readToken` reads the admin-token file (or undefined). */
export interface ConnectionInputs {
  readonly server?: string | undefined;
  readonly token?: string | undefined;
  readonly dataDir?: string | undefined;
  /** `--ca-file`; falls back to `AGENTCTL_CA_FILE`. */
  readonly caFile?: string | undefined;
  /** `--insecure`: a token may go over http:// to a server not on loopback. */
  readonly insecure?: boolean | undefined;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly readToken?: (path: string) => string | undefined;
  /**
   * The data directory a running Control on this machine noted for a local `server`, or
   * undefined when none did (default: {@link findNotedDataDir}).
   */
  readonly findDataDir?: (server: string) => string | undefined;
}

/**
 * Chooses server and token: flag, then environment, then default. The admin-token file
 * under the data directory is read only when the server is on this machine (127.0.0.1,
 * localhost, ::1 or a `unix:` socket), and is then sent only over that data directory's admin
 * Unix socket ({@link localAdminSocket}), never to a TCP port, which another local user could
 * hold while Control is down (security review finding 6). Without `--data-dir` or
 * `AGENT_CONTROL_DATA_DIR`, the data directory of a local server is the one whose running
 * Control noted that server's port or socket ({@link findLocalDataDir}), else `.data` (for a
 * socket in the default place, the data directory it lies in). A token is never sent over
 * http:// off loopback without `insecure` ({@link checkClearTextToken}).
 */
export function resolveConnection(inputs: ConnectionInputs): Connection {
  const server =
    inputs.server !== undefined
      ? parseServerUrl(inputs.server, "--server")
      : parseServerUrl(inputs.env.AGENTCTL_SERVER || DEFAULT_SERVER, "AGENTCTL_SERVER");
  const serverSocket = socketOfServer(server);
  const given = inputs.dataDir ?? inputs.env.AGENT_CONTROL_DATA_DIR;
  const noted =
    given !== undefined || !isLocalServer(server)
      ? undefined
      : serverSocket !== undefined
        ? (findSocketDataDir(serverSocket) ?? defaultDataDirOf(serverSocket))
        : (inputs.findDataDir ?? findNotedDataDir)(server);
  const dataDir =
    given ??
    noted ??
    (isLocalServer(server) && serverSocket === undefined && inputs.findDataDir === undefined
      ? findLocalDataDir(server)
      : DEFAULT_DATA_DIR);
  const dataDirSource: Connection["dataDirSource"] =
    given !== undefined ? "given" : noted !== undefined ? "noted" : "guess";
  const caFile = inputs.caFile ?? (inputs.env.AGENTCTL_CA_FILE || undefined);
  const caSource = inputs.caFile !== undefined ? "--ca-file" : "AGENTCTL_CA_FILE";
  const base = {
    server,
    dataDir,
    dataDirSource,
    ...(serverSocket !== undefined ? { socketPath: serverSocket } : {}),
    ...(caFile !== undefined ? { ca: readCaFile(caFile, caSource) } : {}),
  };
  if (inputs.token !== undefined && inputs.token !== "") {
    checkClearTextToken(server, inputs.insecure === true);
    return { ...base, token: checkToken(inputs.token, "--token"), tokenSource: "flag" };
  }
  const envToken = inputs.env.AGENTCTL_TOKEN;
  if (envToken !== undefined && envToken !== "") {
    checkClearTextToken(server, inputs.insecure === true);
    return { ...base, token: checkToken(envToken, "AGENTCTL_TOKEN"), tokenSource: "env" };
  }
  if (isLocalServer(server)) {
    const path = join(dataDir, "admin-token");
    const fileToken = (inputs.readToken ?? readTokenFile)(path);
    if (fileToken !== undefined && fileToken !== "") {
      return {
        ...base,
        // The local token file goes over the admin socket only, never to a TCP port.
        socketPath: serverSocket ?? localAdminSocket(dataDir),
        token: checkToken(fileToken, `the token in ${path}`),
        tokenSource: "file",
      };
    }
  }
  return { ...base, token: undefined, tokenSource: "none" };
}

/** The socket's path of a `unix:` server, else undefined. */
function socketOfServer(server: string): string | undefined {
  return server.startsWith("unix:") ? server.slice("unix:".length) : undefined;
}

/** The data directory a socket in the default place lies in (`<dataDir>/control-run/admin.sock`). */
function defaultDataDirOf(socket: string): string | undefined {
  return basename(socket) === ADMIN_SOCKET_FILE && basename(dirname(socket)) === ADMIN_SOCKET_DIR
    ? dirname(dirname(socket))
    : undefined;
}

/**
 * True when the server names this machine: a `unix:` socket, or a URL naming `127.0.0.1`,
 * `localhost` or `::1`. Only for these is the local admin-token file read (and then sent over
 * the admin socket only).
 */
export function isLocalServer(server: string): boolean {
  if (server.startsWith("unix:")) return true;
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
  /** What a campaign's current batch waits for (`campaign why`). */
  readonly campaignWaits: Client<typeof CampaignWaitsService>;
  readonly audit: Client<typeof AuditService>;
  readonly desired: Client<typeof DesiredVersionService>;
  readonly plans: Client<typeof PlanService>;
  readonly version: Client<typeof VersionService>;
  /** The admin API these clients call: its base URL, or `unix:<path>` over the admin socket. */
  readonly server: string;
  /** Hears the request body's bytes as they are written (`release register`'s progress). */
  readonly uploads?: UploadWatch;
}

/** Remembers the last method called, so a refusal can say what was refused. */
export interface CallState {
  method: string | undefined;
}

/**
 * Creates the admin clients over Connect on HTTP/1.1, sending the token as a bearer
 * credential on every call and recording each method's name in `state`. Every call is
 * bounded by `timeoutMs` (a stream: until it begins); undefined waits forever. With a
 * `socketPath` every call goes over that Unix socket; for the local token file the socket is
 * first checked to be its owner's ({@link checkAdminSocket}), and nothing is sent when it is
 * absent or not theirs.
 */
export function createAdminClients(
  connection: Connection,
  state: CallState,
  timeoutMs?: number,
): AdminClients {
  const bearer: Interceptor = (next) => async (req) => {
    state.method = req.method.name;
    if (connection.token !== undefined)
      req.header.set("authorization", `Bearer ${connection.token}`);
    return await next(req);
  };
  const socketPath = connection.socketPath;
  const uploads: UploadWatch = { listener: undefined };
  const connect =
    socketPath !== undefined
      ? adminTransport(
          {
            // Over the socket: the host names nothing, Node's socketPath is the address.
            baseUrl: "http://localhost",
            interceptors:
              connection.tokenSource === "file"
                ? [socketGuard(connection, socketPath), bearer]
                : [bearer],
            nodeOptions: { socketPath },
          },
          uploads,
        )
      : adminTransport(
          {
            baseUrl: connection.server,
            interceptors: [bearer],
            // A private CA is trusted in addition to the system's, for https:// servers only.
            ...(connection.ca !== undefined
              ? { nodeOptions: { ca: [...rootCertificates, connection.ca] } }
              : {}),
          },
          uploads,
        );
  const transport = timeoutMs === undefined ? connect : withDeadline(connect, timeoutMs);
  return {
    nodes: createClient(NodeService, transport),
    releases: createClient(ReleaseService, transport),
    campaigns: createClient(CampaignService, transport),
    campaignWaits: createClient(CampaignWaitsService, transport),
    audit: createClient(AuditService, transport),
    desired: createClient(DesiredVersionService, transport),
    plans: createClient(PlanService, transport),
    version: createClient(VersionService, transport),
    server: socketPath !== undefined ? `unix:${socketPath}` : connection.server,
    uploads,
  };
}

/**
 * Before the first call that carries the local token file's token: the socket must be there
 * and be the token file owner's, in a directory no one else may write. Runs before the bearer
 * interceptor, so a refusal sends nothing at all.
 */
function socketGuard(connection: Connection, socketPath: string): Interceptor {
  const tokenFile = join(connection.dataDir, "admin-token");
  let checked = false;
  return (next) => async (req) => {
    if (!checked) {
      const check = checkAdminSocket(socketPath, ownerOf(tokenFile));
      if (check.kind === "absent") {
        throw new ConnectError(
          noControlLine(connection.dataDir, socketPath, tokenFile),
          Code.Unavailable,
        );
      }
      if (check.kind === "untrusted") {
        throw new ConnectError(
          `refusing to send the token in ${tokenFile} over ${socketPath}: ${check.why}`,
          Code.FailedPrecondition,
        );
      }
      checked = true;
    }
    return await next(req);
  };
}

/** The uid owning `path`, else this process's. */
function ownerOf(path: string): number {
  try {
    return statSync(path).uid;
  } catch {
    return process.getuid?.() ?? 0;
  }
}
