/**
 * A loopback TCP proxy for fault tests: it forwards an agent's connection to Control and can
 * stall either direction without closing anything, as a dead peer or a congested network
 * would. While Control → agent is stalled it keeps the bytes Control sent and reads them as
 * HTTP/2 frames, so a test can tell whether Control ended a stream the agent never read.
 */
import { type AddressInfo, createServer, type Server, type Socket } from "node:net";

/** An HTTP/2 frame header seen on the stalled direction. */
export interface Http2Frame {
  readonly type: number;
  readonly flags: number;
  readonly streamId: number;
}

/** HTTP/2 frame types and flags the tests look for. */
export const H2 = { HEADERS: 0x1, RST_STREAM: 0x3, GOAWAY: 0x7, END_STREAM: 0x1 } as const;

/** A running proxy. */
export interface TcpProxy {
  /** `127.0.0.1:<port>` to give agents instead of Control's address. */
  readonly address: string;
  /** Stops delivering Control's bytes to agents (they are kept, not lost). */
  stallDownstream(): void;
  /** Stops forwarding in both directions, without closing: a peer that vanished. */
  blackhole(): void;
  /** Frames Control sent while downstream was stalled or blackholed (never delivered). */
  heldFrames(): Http2Frame[];
  /** True once a held frame ended a stream: RST_STREAM, or HEADERS with END_STREAM (trailers). */
  heldStreamEnd(): boolean;
  close(): Promise<void>;
}

/** Starts a proxy to `target` (`host:port`). */
export async function startTcpProxy(target: string): Promise<TcpProxy> {
  const [host, port] = [target.slice(0, target.lastIndexOf(":")), Number(target.split(":").pop())];
  const pairs: Array<{ client: Socket; upstream: Socket }> = [];
  let stalled = false;
  let holed = false;
  const held: Http2Frame[] = [];
  const server: Server = createServer((client) => {
    const upstream = new (client.constructor as typeof Socket)();
    upstream.connect(port, host);
    pairs.push({ client, upstream });
    const frames = new FrameReader((frame) => {
      if (stalled || holed) held.push(frame);
    });
    client.on("data", (chunk) => {
      if (!holed) upstream.write(chunk);
    });
    upstream.on("data", (chunk: Buffer) => {
      frames.feed(chunk);
      if (!stalled && !holed) client.write(chunk);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    address: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    stallDownstream() {
      stalled = true;
    },
    blackhole() {
      holed = true;
    },
    heldFrames: () => [...held],
    heldStreamEnd: () =>
      held.some(
        (f) =>
          f.streamId > 0 &&
          (f.type === H2.RST_STREAM || (f.type === H2.HEADERS && (f.flags & H2.END_STREAM) !== 0)),
      ),
    close: () =>
      new Promise<void>((resolve) => {
        for (const { client, upstream } of pairs) {
          client.destroy();
          upstream.destroy();
        }
        server.close(() => resolve());
      }),
  };
}

/** Follows HTTP/2 frame boundaries on Control's side of a connection (which has no preface). */
class FrameReader {
  private header = Buffer.alloc(0);
  private skip = 0;

  constructor(private readonly onFrame: (frame: Http2Frame) => void) {}

  feed(chunk: Buffer): void {
    let at = 0;
    while (at < chunk.length) {
      if (this.skip > 0) {
        const n = Math.min(this.skip, chunk.length - at);
        this.skip -= n;
        at += n;
        continue;
      }
      const need = 9 - this.header.length;
      this.header = Buffer.concat([this.header, chunk.subarray(at, at + need)]);
      at += Math.min(need, chunk.length - at);
      if (this.header.length < 9) return;
      this.skip = this.header.readUIntBE(0, 3);
      this.onFrame({
        type: this.header[3] ?? 0,
        flags: this.header[4] ?? 0,
        streamId: this.header.readUInt32BE(5) & 0x7fff_ffff,
      });
      this.header = Buffer.alloc(0);
    }
  }
}
