/**
 * How agentctl reaches Control: which server and token it uses (flags, environment, then
 * the local admin-token file) and the Connect clients of the admin API. Loaded only by
 * commands that talk to a server, so offline commands never pay for the transport.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { rootCertificates } from "node:tls";
import { type Client, createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
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
import { checkClearTextToken, checkToken, parseServerUrl } from "./args.js";
import { readCaFile } from "./ca-file.js";
import { withDeadline } from "./deadline-transport.js";
import { DEFAULT_DATA_DIR, findLocalDataDir, findNotedDataDir } from "./local-control.js";

/** The server agentctl talks to when neither `--server` nor `AGENTCTL_SERVER` is set. */
export const DEFAULT_SERVER = "http://127.0.0.1:7080";
/** The data directory when neither `--data-dir` nor `AGENT_CONTROL_DATA_DIR` is set. */
export { DEFAULT_DATA_DIR } from "./local-control.js";

/** Where agentctl connects and with which credential, and where each came from. */
export interface Connection {
  /** Base URL of the admin API, without a trailing slash. */
  readonly server: string;
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
 * localhost or ::1), so a local operator token never travels to another host. Without
 * `--data-dir` or `AGENT_CONTROL_DATA_DIR`, the data directory of a local server is the one
 * whose running Control noted that server's port ({@link findLocalDataDir}), else `.data`.
 * A token is never sent over http:// off loopback without `insecure`
 * ({@link checkClearTextToken}).
 */
export function resolveConnection(inputs: ConnectionInputs): Connection {
  const server =
    inputs.server !== undefined
      ? parseServerUrl(inputs.server, "--server")
      : parseServerUrl(inputs.env.AGENTCTL_SERVER || DEFAULT_SERVER, "AGENTCTL_SERVER");
  const given = inputs.dataDir ?? inputs.env.AGENT_CONTROL_DATA_DIR;
  const noted =
    given === undefined && isLocalServer(server)
      ? (inputs.findDataDir ?? findNotedDataDir)(server)
      : undefined;
  const dataDir =
    given ??
    noted ??
    (isLocalServer(server) && inputs.findDataDir === undefined
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
      return { ...base, token: checkToken(fileToken, `the token in ${path}`), tokenSource: "file" };
    }
  }
  return { ...base, token: undefined, tokenSource: "none" };
}

/**
 * True when the server URL names this machine by `127.0.0.1`, `localhost` or `::1`: the only
 * servers the local admin-token file is sent to.
 */
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
  /** What a campaign's current batch waits for (`campaign why`). */
  readonly campaignWaits: Client<typeof CampaignWaitsService>;
  readonly audit: Client<typeof AuditService>;
  readonly desired: Client<typeof DesiredVersionService>;
  readonly plans: Client<typeof PlanService>;
  readonly version: Client<typeof VersionService>;
  /** The admin API's base URL these clients call. */
  readonly server: string;
}

/** Remembers the last method called, so a refusal can say what was refused. */
export interface CallState {
  method: string | undefined;
}

/**
 * Creates the admin clients over Connect on HTTP/1.1, sending the token as a bearer
 * credential on every call and recording each method's name in `state`. Every call is
 * bounded by `timeoutMs` (a stream: until it begins); undefined waits forever.
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
  const connect = createConnectTransport({
    baseUrl: connection.server,
    httpVersion: "1.1",
    interceptors: [bearer],
    // A private CA is trusted in addition to the system's, for https:// servers only.
    ...(connection.ca !== undefined
      ? { nodeOptions: { ca: [...rootCertificates, connection.ca] } }
      : {}),
  });
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
    server: connection.server,
  };
}
