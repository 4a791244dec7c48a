/**
 * Serves artifact files Control holds: `GET` and `HEAD /downloads/agent/{version}/{platform}`,
 * on the downloads listener (`downloads.addr`) or, when none is configured, on the admin port.
 *
 * Integrity comes from the signed manifest's sha256 and size, which every Agent checks; the
 * route guards Control itself:
 * - bodies stream chunk by chunk from PostgreSQL ({@link ArtifactChunks}), waiting for the
 *   client to drain each one, so memory per download is about one chunk, never the file;
 * - with `authenticate`, a request's credential is checked before it may take a slot (401
 *   otherwise), so an unauthenticated client never holds one; at most `maxConcurrent`
 *   credentials are checked at once, the excess answered 503 before any database work;
 * - at most `maxConcurrent` requests are served at once, at most `maxPerClient` of them to
 *   one client (a node; without `authenticate`, a remote address off loopback); the excess
 *   is answered 503 with `Retry-After`, before any database work when unauthenticated;
 * - a client that reads nothing for `stallMs` is disconnected, freeing its slot; and once
 *   every slot is taken, a request answered 503 first cuts the client that has taken nothing
 *   for the longest, if that is {@link DOWNLOAD_IDLE_CUT_MS} or more, so the Agent retrying
 *   after its `Retry-After` finds the slot free (its retries last about 20 s);
 * - a single `Range` is answered 206 (416 when unsatisfiable), so an Agent resumes;
 * - every answer on HTTP/1.1 ends its connection (`connection: close`, see
 *   {@link endsConnection}), so no client sends a request on a connection Control is closing;
 * - with `authenticate`, a request needs a node credential (bearer node token, or a verified
 *   client certificate on a TLS listener with a client CA): 401 otherwise, whose body says
 *   what is accepted, logged at most once a minute per client address ({@link downloadRefusalLog}).
 */
import type { PeerCertificate, TLSSocket } from "node:tls";
import { isLoopbackHost } from "../config-clear-text.js";
import type { Database } from "../db/database.js";
import { ReleaseEntity } from "../db/entities/index.js";
import { ControlError } from "../errors.js";
import type { HttpRoute } from "../shared/http-route.js";
import type { ArtifactChunks } from "./artifact-chunks.js";
import { decideRange } from "./byte-range.js";
import { downloadRefusalLog, type RefusalLogger } from "./download-refusals.js";

const PATH = /^\/downloads\/agent\/([^/]+)\/([^/]+)$/;

/** Seconds a client refused for concurrency is told to wait. */
export const DOWNLOAD_RETRY_AFTER_SECONDS = 2;

/**
 * A download whose client has taken no bytes for this long (Control waiting on a full
 * socket) loses its slot as soon as another request wants one.
 */
export const DOWNLOAD_IDLE_CUT_MS = 5_000;

/** The URL path of a served artifact. */
export function downloadPath(version: string, platform: string): string {
  return `/downloads/agent/${encodeURIComponent(version)}/${encodeURIComponent(platform)}`;
}

/** Who a download credential names (the agent stream's identities, structurally). */
export type DownloadIdentity =
  | { readonly kind: "node" | "certificate"; readonly nodeId: string }
  | { readonly kind: "join" };

/**
 * Checks a request's credential as the agent stream does; throws `ControlError`
 * (`unauthenticated`) when it is missing or wrong. Injected by app.ts, so this module never
 * depends on the agent server.
 */
export type DownloadAuthenticator = (
  authorization: string | undefined,
  peerCertificate: PeerCertificate | undefined,
) => Promise<DownloadIdentity>;

/** Options of {@link downloadsRoute}. */
export interface DownloadsOptions {
  readonly db: Database;
  readonly chunks: ArtifactChunks;
  /** Requests served at once; more are answered 503. */
  readonly maxConcurrent: number;
  /** Requests served at once to one client (default: no limit); more are answered 503. */
  readonly maxPerClient?: number | undefined;
  /** A slot's client idle this long is cut when the slots are full (default {@link DOWNLOAD_IDLE_CUT_MS}). */
  readonly idleCutMs?: number | undefined;
  /** A client that takes nothing for this long is disconnected. */
  readonly stallMs: number;
  /** Required credential; undefined serves anyone who reaches the port. */
  readonly authenticate?: DownloadAuthenticator | undefined;
  /** Called once per answered request with its HTTP status (metrics). */
  readonly onAnswer?: ((status: number) => void) | undefined;
  /**
   * The listener verifies client certificates (it has a client CA), so a node's certificate
   * is a credential here; said in the 401 body.
   */
  readonly clientCertificates?: boolean | undefined;
  /** Where refused downloads are logged (at most a line per client address per minute). */
  readonly log?: RefusalLogger | undefined;
}

/** The route and what it is doing now. */
export interface Downloads {
  readonly route: HttpRoute;
  /** Requests being served now (at most `maxConcurrent`). */
  active(): number;
}

type Request = Parameters<HttpRoute>[0];
type Response = Parameters<HttpRoute>[1];

/** A download being served: whose it is, and since when it waits on its client. */
interface Slot {
  readonly client: string | undefined;
  /** Since when Control waits for the client to take bytes (ms); undefined while it need not. */
  idleSince: number | undefined;
  /** Ends the download (the connection is destroyed). */
  cut(): void;
}

/** Builds the download route. */
export function downloadsRoute(options: DownloadsOptions): Downloads {
  const slots = new Set<Slot>();
  const perClient = new Map<string, number>();
  const idleCutMs = options.idleCutMs ?? DOWNLOAD_IDLE_CUT_MS;
  let authenticating = 0;
  const refusals = options.log && downloadRefusalLog({ log: options.log });
  const accepted = acceptedCredentials(options.clientCertificates === true);
  const route: HttpRoute = async (req, res) => {
    const match = PATH.exec((req.url ?? "").split("?")[0] ?? "");
    if (!match) return false;
    endsConnection(res);
    const answer = (status: number, headers: Record<string, string | number>, body = "") => {
      options.onAnswer?.(status);
      res.writeHead(status, body ? { "content-type": "text/plain", ...headers } : headers);
      res.end(body);
    };
    const busy = (what: string) =>
      answer(
        503,
        { "retry-after": DOWNLOAD_RETRY_AFTER_SECONDS },
        `${what}; retry after ${DOWNLOAD_RETRY_AFTER_SECONDS} s\n`,
      );
    if (req.method !== "GET" && req.method !== "HEAD") {
      answer(405, { allow: "GET, HEAD" });
      return true;
    }
    const version = decode(match[1] ?? "");
    const platform = decode(match[2] ?? "");
    if (version === undefined || platform === undefined) {
      answer(400, {}, "malformed percent-encoding in the path\n");
      return true;
    }
    // Who is asking, before any slot: a node by its credential, else its address.
    let client: string | undefined;
    if (options.authenticate) {
      if (authenticating >= options.maxConcurrent) {
        busy("too many downloads at once");
        return true;
      }
      authenticating += 1;
      let checked: { nodeId: string } | { refusal: string };
      try {
        checked = await check(req, options.authenticate, accepted);
      } finally {
        authenticating -= 1;
      }
      if ("refusal" in checked) {
        refusals?.refused(remoteAddress(req) || "unknown", checked.refusal);
        answer(
          401,
          { "www-authenticate": 'Bearer realm="agent-control downloads"' },
          checked.refusal,
        );
        return true;
      }
      client = `node:${checked.nodeId}`;
    } else {
      client = remoteClient(req);
    }
    if (
      client !== undefined &&
      (perClient.get(client) ?? 0) >= (options.maxPerClient ?? Infinity)
    ) {
      busy("too many downloads for this client at once");
      return true;
    }
    if (slots.size >= options.maxConcurrent) {
      cutIdlest(slots, idleCutMs);
      busy("too many downloads at once");
      return true;
    }
    const slot: Slot = { client, idleSince: undefined, cut: () => res.destroy() };
    slots.add(slot);
    if (client !== undefined) perClient.set(client, (perClient.get(client) ?? 0) + 1);
    try {
      await serve(req, res, version, platform, options, answer, slot);
    } finally {
      release(slot);
    }
    return true;
  };
  /** Frees `slot` (once: a slot cut for another request is freed at once). */
  const release = (slot: Slot) => {
    if (!slots.delete(slot) || slot.client === undefined) return;
    const held = (perClient.get(slot.client) ?? 1) - 1;
    if (held > 0) perClient.set(slot.client, held);
    else perClient.delete(slot.client);
  };
  const cutIdlest = (all: Set<Slot>, minIdleMs: number) => {
    const now = Date.now();
    let idlest: Slot | undefined;
    for (const slot of all) {
      if (slot.idleSince === undefined || now - slot.idleSince < minIdleMs) continue;
      if (idlest === undefined || slot.idleSince < (idlest.idleSince ?? now)) idlest = slot;
    }
    if (idlest === undefined) return;
    release(idlest);
    idlest.cut();
  };
  return { route, active: () => slots.size };
}

/** The request's remote address, IPv4 without its IPv6 mapping; "" when unknown. */
function remoteAddress(req: Request): string {
  return (req.socket.remoteAddress ?? "").replace(/^::ffff:/, "");
}

/** The per-client key of an unauthenticated request: its address, none on loopback. */
function remoteClient(req: Request): string | undefined {
  const address = remoteAddress(req);
  // Loopback is this host: the demo, the simulator and the tests run whole fleets from it.
  return address === "" || isLoopbackHost(address) ? undefined : `address:${address}`;
}

async function serve(
  req: Request,
  res: Response,
  version: string,
  platform: string,
  options: DownloadsOptions,
  answer: (status: number, headers: Record<string, string | number>, body?: string) => void,
  slot: Slot,
): Promise<void> {
  const release = await options.db.em().findOne(ReleaseEntity, { version });
  const artifact = release?.artifacts.find((a) => a.platform === platform && a.url === "");
  const size = artifact ? await options.chunks.size(artifact.sha256) : undefined;
  if (!artifact || size === undefined) {
    answer(404, {}, `no served artifact for ${version}/${platform}\n`);
    return;
  }
  const etag = `"${artifact.sha256}"`;
  const common = {
    "content-type": "application/octet-stream",
    "accept-ranges": "bytes",
    etag,
  };
  const range = decideRange(header(req, "range"), size, etag, header(req, "if-range"));
  if (range.kind === "unsatisfiable") {
    answer(416, { "content-range": `bytes */${size}` }, `range not satisfiable: ${size} bytes\n`);
    return;
  }
  const [start, end] = range.kind === "partial" ? [range.start, range.end] : [0, size - 1];
  options.onAnswer?.(range.kind === "partial" ? 206 : 200);
  res.writeHead(range.kind === "partial" ? 206 : 200, {
    ...common,
    "content-length": end - start + 1,
    ...(range.kind === "partial" ? { "content-range": `bytes ${start}-${end}/${size}` } : {}),
  });
  if (req.method === "HEAD" || size === 0) {
    res.end();
    return;
  }
  try {
    await stream(res, options.chunks, artifact.sha256, start, end, options.stallMs, slot);
  } catch {
    // Headers are sent: all that is left is to cut the connection so the client sees a
    // short body (and its sha256 check fails) instead of a wrong one.
    res.destroy();
  }
}

/**
 * Marks an HTTP/1.1 response as the last of its connection (`connection: close`; Node.js
 * then closes it once the response is written). A kept-alive connection would be closed
 * by the listener's keep-alive timer, which starts when Control hands the last byte to the
 * kernel, while a client starts its own when it reads that byte: a client that reads a
 * multi-MiB body seconds behind Control (the socket buffers hold megabytes) then sends its
 * next request on a connection Control is closing, and the request fails with no response
 * at all ("other side closed"). A download is megabytes, so a new connection per download
 * costs nothing that matters; a client refused with 503 also keeps no connection open
 * while it waits. HTTP/2 streams (the admin port) have no such race and are left alone.
 */
function endsConnection(res: Response): void {
  if ("shouldKeepAlive" in res) res.shouldKeepAlive = false;
}

/** Writes bytes `start`…`end`, one chunk at a time, waiting for the client between chunks. */
async function stream(
  res: Response,
  chunks: ArtifactChunks,
  sha256: string,
  start: number,
  end: number,
  stallMs: number,
  slot: Slot,
): Promise<void> {
  let closed = false;
  res.once("close", () => {
    closed = true;
  });
  let offset = start;
  while (offset <= end) {
    if (closed) return;
    const index = Math.floor(offset / chunks.chunkBytes);
    const base = index * chunks.chunkBytes;
    const chunk = await chunks.chunk(sha256, index);
    const piece = chunk.subarray(offset - base, Math.min(chunk.byteLength, end - base + 1));
    if (piece.byteLength === 0) throw new Error(`artifact file ${sha256} is shorter than stored`);
    offset += piece.byteLength;
    if (closed) return;
    // ServerResponse and Http2ServerResponse both take a Buffer; their overloads do not unify.
    if (!(res as { write(chunk: Uint8Array): boolean }).write(piece)) {
      slot.idleSince = Date.now();
      await drained(res, stallMs);
      slot.idleSince = undefined;
    }
  }
  if (!closed) res.end();
}

/** Resolves once `res` drains or closes; destroys it when it does neither within `stallMs`. */
function drained(res: Response, stallMs: number): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    const timer = setTimeout(() => {
      res.destroy(); // emits close, which resolves
    }, stallMs);
    res.on("drain", done);
    res.on("close", done);
  });
}

/** What a download accepts as its credential, as the 401 body says it. */
function acceptedCredentials(clientCertificates: boolean): string {
  const token = "a node token ('authorization: Bearer <node token>'; a join token is refused)";
  return clientCertificates
    ? `${token} or the node's client certificate (signed by this listener's client CA)`
    : `${token}; client certificates are not checked here (this listener has no client CA: tls.downloads.clientCa)`;
}

/** The node a request's credential names, or why it does not allow downloads. */
async function check(
  req: Request,
  authenticate: DownloadAuthenticator,
  accepted: string,
): Promise<{ nodeId: string } | { refusal: string }> {
  const authorization = header(req, "authorization");
  const certificate = peerCertificate(req);
  if (authorization === undefined && certificate === undefined) {
    return { refusal: `missing credential: a download needs ${accepted}\n` };
  }
  try {
    const identity = await authenticate(authorization, certificate);
    if (identity.kind === "join") {
      return { refusal: `a join token does not download artifacts: send ${accepted}\n` };
    }
    return { nodeId: identity.nodeId };
  } catch (error) {
    if (error instanceof ControlError && error.code === "unauthenticated") {
      return { refusal: `${error.message}: a download needs ${accepted}\n` };
    }
    throw error;
  }
}

/** The verified client certificate of a TLS request, if any. */
function peerCertificate(req: Request): PeerCertificate | undefined {
  const socket = req.socket as Partial<TLSSocket>;
  if (socket.authorized !== true || typeof socket.getPeerCertificate !== "function") {
    return undefined;
  }
  const cert = socket.getPeerCertificate();
  return cert && Object.keys(cert).length > 0 ? cert : undefined;
}

function header(req: Request, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function decode(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}
