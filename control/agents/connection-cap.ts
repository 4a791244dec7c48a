/**
 * The agent listener's TCP socket, owned here rather than by grpc-js so the number of
 * connections (each one a file descriptor) is capped: beyond `maxConnections` Node.js closes
 * a new connection as soon as it is accepted, so the descriptor is back at once and a flood
 * of connections, with or without streams, cannot exhaust the process's descriptors. grpc-js
 * serves the accepted sockets through its public `createConnectionInjector`, with the same
 * HTTP/2 settings and credentials (TLS included) as a port it binds itself.
 *
 * Its accept queue ({@link acceptBacklog}) has room for every connection Control holds, so a
 * wave of agents reconnecting at once waits there for Control's event loop instead of being
 * dropped at the SYN, which their kernels retry only 1 s, 3 s and 7 s later.
 *
 * The cap alone would let anyone holding `maxConnections` silent connections lock the fleet
 * out, so each connection is also bounded until a stream on it authenticates: in time and in
 * number per source address (unauthenticated-connections.ts).
 */
import { createServer, type Server, type Socket } from "node:net";
import type { Logger } from "../log.js";
import type { ListenAddress } from "../shared/listen-address.js";
import type { UnauthenticatedConnections } from "./unauthenticated-connections.js";

/** Node.js's default accept queue: what the listener asks for at least. */
const DEFAULT_ACCEPT_BACKLOG = 511;

/**
 * The accept queue asked of the kernel for a listener holding `maxConnections`: room for all
 * of them, at least {@link DEFAULT_ACCEPT_BACKLOG}. The kernel truncates it to
 * `net.core.somaxconn` (4096 by default since Linux 5.4); a connection arriving at a full
 * queue is dropped at its SYN. A queued connection holds no descriptor of Control's.
 */
export function acceptBacklog(maxConnections: number): number {
  return Math.max(DEFAULT_ACCEPT_BACKLOG, maxConnections);
}

/** Options of {@link listenCapped}. */
export interface CappedListenerOptions {
  readonly address: ListenAddress;
  /**
   * Connections held at once; the next is closed at accept (≥ 1). The accept queue is sized
   * from it ({@link acceptBacklog}).
   */
  readonly maxConnections: number;
  /** Hands an accepted connection to the gRPC server. */
  readonly accept: (socket: Socket) => void;
  /** Told of each connection closed at accept because the cap was reached. */
  readonly dropped: () => void;
  /**
   * Bounds every accepted connection until a stream on it authenticates: one refused by it
   * (its address holds too many unauthenticated connections) is destroyed at once and never
   * reaches `accept`.
   */
  readonly unauthenticated: UnauthenticatedConnections;
  readonly log: Logger;
}

/** A listening, capped agent socket. */
export interface CappedListener {
  /** The bound port (useful with port 0). */
  readonly port: number;
  /** Connections open now. */
  readonly connections: number;
  /**
   * Stops accepting new connections at once; open ones are left to the gRPC server's drain.
   * Resolves once every connection has closed.
   */
  close(): Promise<void>;
  /** Destroys every connection still open (after a drain ran out of time). */
  destroyAll(): void;
}

/** Binds `address` and hands each connection, up to the cap, to `accept`. */
export async function listenCapped(options: CappedListenerOptions): Promise<CappedListener> {
  const open = new Set<Socket>();
  const server: Server = createServer((socket) => {
    if (!options.unauthenticated.admit(socket)) {
      socket.destroy();
      return;
    }
    open.add(socket);
    socket.once("close", () => open.delete(socket));
    options.accept(socket);
  });
  server.maxConnections = options.maxConnections;
  server.on("drop", () => options.dropped());
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    const { port, host } = options.address;
    server.listen({ port, host, backlog: acceptBacklog(options.maxConnections) }, () => {
      server.off("error", reject);
      resolve();
    });
  });
  // After binding, an accept error (EMFILE despite the cap, ENOBUFS) must not end Control:
  // libuv keeps listening; the connection that failed is the only loss.
  server.on("error", (error) => {
    options.log.warn({ err: (error as Error).message }, "agent listener: accept failed");
  });
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("agent listener: no port");
  return {
    port: address.port,
    get connections() {
      return open.size;
    },
    close: () =>
      new Promise<void>((resolve) => {
        if (!server.listening) return resolve();
        server.close(() => resolve());
      }),
    destroyAll() {
      for (const socket of open) socket.destroy();
    },
  };
}
