/**
 * A minimal HTTP/1.1 client over one TCP connection that behaves as keep-alive clients do
 * (undici, browsers): once a response's body has been read to its `content-length`, the
 * next request goes on the same connection at once, unless that response said
 * `connection: close`, in which case it opens a new connection. Reading can be held back
 * for a while after a request, like a client busy elsewhere while the kernel's socket
 * buffers hold the response.
 */
import { createHash } from "node:crypto";
import { connect, type Socket } from "node:net";

/** One answered request. */
export interface KeepAliveAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly bytes: number;
  readonly sha256: string;
  /** Whether it was sent on the connection of the previous request. */
  readonly reused: boolean;
}

/** A request that got no complete response: the connection ended or failed first. */
export class NoResponseError extends Error {}

/**
 * GETs `path` from `host:port` once per entry of `holdMs`, holding back the reading of each
 * response for that many milliseconds after sending its request. Resolves with every
 * answer; rejects with {@link NoResponseError} when a connection ends before a response.
 */
export async function keepAliveGets(
  host: string,
  port: number,
  path: string,
  holdMs: readonly number[],
): Promise<KeepAliveAnswer[]> {
  const answers: KeepAliveAnswer[] = [];
  let socket: Socket | undefined;
  for (const [i, hold] of holdMs.entries()) {
    const reused = socket !== undefined;
    socket ??= await open(host, port);
    const answer = await exchange(socket, host, path, hold, reused, i);
    answers.push(answer);
    if (answer.headers.connection?.toLowerCase() === "close") {
      socket.destroy();
      socket = undefined;
    }
  }
  socket?.destroy();
  return answers;
}

function open(host: string, port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port }, () => {
      socket.off("error", reject);
      resolve(socket);
    });
    socket.once("error", reject);
  });
}

/** Sends one GET on `socket` and reads its response, holding the reading back `holdMs`. */
function exchange(
  socket: Socket,
  host: string,
  path: string,
  holdMs: number,
  reused: boolean,
  index: number,
): Promise<KeepAliveAnswer> {
  return new Promise((resolve, reject) => {
    let head = Buffer.alloc(0);
    let parsed: { status: number; headers: Record<string, string>; length: number } | undefined;
    let bytes = 0;
    const hash = createHash("sha256");
    const cleanup = () => {
      socket.off("data", onData);
      socket.off("end", onEnd);
      socket.off("error", onError);
      socket.off("close", onEnd);
    };
    const fail = (why: string) => {
      cleanup();
      reject(
        new NoResponseError(
          `request ${index + 1} (${reused ? "reused" : "new"} connection): ${why}`,
        ),
      );
    };
    const onEnd = () => fail(`the connection ended after ${bytes} body bytes`);
    const onError = (error: Error) => fail(`${(error as { code?: string }).code ?? error.message}`);
    const onData = (data: Buffer) => {
      let body = data;
      if (parsed === undefined) {
        head = Buffer.concat([head, data]);
        const end = head.indexOf("\r\n\r\n");
        if (end < 0) return;
        const lines = head.subarray(0, end).toString("latin1").split("\r\n");
        const status = Number(lines[0]?.split(" ")[1]);
        const headers: Record<string, string> = {};
        for (const line of lines.slice(1)) {
          const colon = line.indexOf(":");
          headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
        }
        parsed = { status, headers, length: Number(headers["content-length"] ?? 0) };
        body = head.subarray(end + 4);
      }
      hash.update(body);
      bytes += body.byteLength;
      if (bytes >= parsed.length) {
        cleanup();
        resolve({
          status: parsed.status,
          headers: parsed.headers,
          bytes,
          sha256: hash.digest("hex"),
          reused,
        });
      }
    };
    socket.on("data", onData);
    socket.on("end", onEnd);
    socket.on("close", onEnd);
    socket.on("error", onError);
    socket.pause();
    socket.write(`GET ${path} HTTP/1.1\r\nhost: ${host}\r\n\r\n`);
    setTimeout(() => socket.resume(), holdMs);
  });
}
