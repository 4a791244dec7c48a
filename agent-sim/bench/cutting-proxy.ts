/**
 * A TCP proxy that plays a poor link: it forwards each client connection to one upstream
 * HTTP server and closes the connection once it has forwarded `cutAfterBytes` bytes of the
 * upstream's answer (headers included), as a flaky network or a middlebox with a byte budget
 * would. It counts every byte it forwarded to clients, so a test or a benchmark can tell how
 * much an artifact download really cost, and it records each connection's request heads and
 * first answer's status (requests carry no body here: GET and HEAD). It can flip one byte of one connection's answer (a corrupting link).
 * Knows nothing of HTTP beyond reading the request head and the status line for the record.
 */

import type { AddressInfo } from "node:net";
import { connect, createServer, type Server, type Socket } from "node:net";

/** One connection the proxy forwarded. */
export interface ProxiedConnection {
  /**
   * The request heads the client sent on it (request line and headers, as text), in order:
   * a client keeping the connection alive sends more than one.
   */
  readonly requests: readonly string[];
  /** The status code of the upstream's first answer on it; 0 when none arrived. */
  readonly status: number;
  /** Bytes of the answer forwarded to the client. */
  readonly bytes: number;
  /** True when the proxy cut the connection at its byte budget. */
  readonly cut: boolean;
}

/** A byte of one connection's answer to flip (XOR 0xff) on its way to the client. */
export interface Corruption {
  /** Which connection, counted from 0 in the order they were accepted. */
  readonly connection: number;
  /** Offset in that connection's answer, headers included. */
  readonly offset: number;
}

/** Options of {@link startCuttingProxy}. */
export interface CuttingProxyOptions {
  /** `host:port` of the upstream HTTP server. */
  readonly upstream: string;
  /** Bytes of an answer forwarded before its connection is closed; Infinity: never cut. */
  readonly cutAfterBytes: number;
  /** Bytes to corrupt, each at most once. */
  readonly corrupt?: readonly Corruption[];
}

/** A running proxy. */
export interface CuttingProxy {
  /** `http://127.0.0.1:PORT`, without a trailing slash. */
  readonly url: string;
  /** Every connection so far, in the order accepted (a live view: entries fill in). */
  readonly connections: readonly ProxiedConnection[];
  /** Bytes forwarded to clients so far, over every connection. */
  bytesForwarded(): number;
  /** Called each time a connection is cut at its byte budget, as its end is sent. */
  onCut(listener: (connection: number) => void): void;
  /** Called with each request head as it arrives, before it goes upstream. */
  onRequest(listener: (connection: number, head: string) => void): void;
  /** Stops accepting and destroys every connection. */
  close(): Promise<void>;
}

interface ConnectionRecord {
  requests: string[];
  status: number;
  bytes: number;
  cut: boolean;
}

/**
 * Starts a proxy on 127.0.0.1 (a port of its own) in front of `options.upstream`. A cut sends
 * every byte up to the budget and then FIN (the client reads all it was sent, then the end of
 * the stream), and drops the upstream connection.
 */
export async function startCuttingProxy(options: CuttingProxyOptions): Promise<CuttingProxy> {
  const [host, portText] = splitHostPort(options.upstream);
  const records: ConnectionRecord[] = [];
  const sockets = new Set<Socket>();
  const cutListeners: ((connection: number) => void)[] = [];
  const requestListeners: ((connection: number, head: string) => void)[] = [];
  let forwarded = 0;
  const server: Server = createServer((client) => {
    const index = records.length;
    const record: ConnectionRecord = { requests: [], status: 0, bytes: 0, cut: false };
    records.push(record);
    const upstream = connect(Number(portText), host);
    sockets.add(client);
    sockets.add(upstream);
    const forget = () => {
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on("close", forget);
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.destroy());
    upstream.on("close", () => client.end());
    client.on("end", () => upstream.end());
    let pending = "";
    client.on("data", (chunk: Buffer) => {
      pending += chunk.toString("latin1");
      for (let end = pending.indexOf("\r\n\r\n"); end >= 0; end = pending.indexOf("\r\n\r\n")) {
        const head = pending.slice(0, end);
        pending = pending.slice(end + 4);
        record.requests.push(head);
        for (const listener of requestListeners) listener(index, head);
      }
      upstream.write(chunk);
    });
    const corrupt = (options.corrupt ?? []).filter((c) => c.connection === index);
    upstream.on("data", (data: Buffer) => {
      if (record.cut) return;
      if (record.bytes === 0) {
        record.status = Number(
          /^HTTP\/\d(?:\.\d)? (\d{3})/.exec(data.toString("latin1"))?.[1] ?? 0,
        );
      }
      const room = options.cutAfterBytes - record.bytes;
      const piece = Buffer.from(data.subarray(0, Math.max(0, Math.min(room, data.byteLength))));
      for (const c of corrupt) {
        const at = c.offset - record.bytes;
        if (at >= 0 && at < piece.byteLength) piece[at] = (piece[at] ?? 0) ^ 0xff;
      }
      record.bytes += piece.byteLength;
      forwarded += piece.byteLength;
      if (piece.byteLength > 0 && !client.write(piece)) {
        upstream.pause();
        client.once("drain", () => upstream.resume());
      }
      if (record.bytes >= options.cutAfterBytes) {
        record.cut = true;
        upstream.destroy();
        client.end();
        for (const listener of cutListeners) listener(index);
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    connections: records,
    bytesForwarded: () => forwarded,
    onCut(listener) {
      cutListeners.push(listener);
    },
    onRequest(listener) {
      requestListeners.push(listener);
    },
    close() {
      return new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      });
    },
  };
}

function splitHostPort(address: string): [string, string] {
  const colon = address.lastIndexOf(":");
  if (colon <= 0) throw new Error(`upstream ${JSON.stringify(address)} is not host:port`);
  return [address.slice(0, colon).replace(/^\[|\]$/g, ""), address.slice(colon + 1)];
}
