/**
 * The agent listener's connections that have not yet carried an authenticated agent stream.
 * The connection cap (connection-cap.ts) alone lets anyone who can reach the port hold every
 * connection slot by opening `maxConnections` connections and sending nothing (or only a TLS
 * ClientHello, or only the HTTP/2 preface): real agents are then closed at accept. So until a
 * stream on it has authenticated (a join token, a node token or a client certificate that
 * Control accepted), a connection is bounded twice:
 *
 * - in time: it is destroyed `deadlineMs` (Control's Clock) after it was accepted, unless a
 *   stream on it is being handshaken then (that stream is bounded by the handshake limits and
 *   the Hello timeout; the deadline starts again when it ends without authenticating);
 * - in number per source: one address (an IPv6 /64) holds at most `perAddress` of them; the
 *   next one is closed at accept. Loopback is not capped by default: the agent simulator opens
 *   thousands of connections from 127.0.0.1, and a local proxy presents every agent as it.
 *
 * Once a stream authenticated on it, a connection is the fleet's: neither bound applies again
 * (grpc-js closes one that stays without a stream, `grpc.max_connection_idle_ms`).
 *
 * Streams name their connection by grpc-js's `call.getPeer()`, `address:port` of the remote end,
 * the same string built here from the accepted socket.
 */
import { isIPv4, type Socket } from "node:net";
import type { Clock } from "../clock.js";
import { type ClockTimer, scheduleOnce } from "../clock-timer.js";

/** Why an unauthenticated connection was closed. */
export type UnauthenticatedClose = "auth_deadline" | "unauthenticated_per_address";

/** The reasons of {@link UnauthenticatedClose}, for metrics presets. */
export const UNAUTHENTICATED_CLOSES: readonly UnauthenticatedClose[] = [
  "auth_deadline",
  "unauthenticated_per_address",
];

/** Options of {@link UnauthenticatedConnections}. */
export interface UnauthenticatedOptions {
  /**
   * How long (of `clock`'s time, in ms) a connection may stay without an authenticated stream
   * (`timeouts.agentConnectionAuthSeconds`); > 0 and finite.
   */
  readonly deadlineMs: number;
  /**
   * Unauthenticated connections one source may hold at once
   * (`limits.agentUnauthenticatedConnectionsPerAddress`); an integer ≥ 1.
   */
  readonly perAddress: number;
  /** Whether connections from `address` are counted per source; default: all but loopback. */
  readonly capped?: (address: string) => boolean;
  readonly clock: Clock;
  /** Told of each connection closed by either bound, with its remote address. */
  readonly closed: (reason: UnauthenticatedClose, address: string) => void;
}

/**
 * What an agent stream tells the listener of the connection it arrived on, named by its peer
 * (`call.getPeer()`). Each call is cheap, never throws, and is a no-op for a peer not held.
 */
export interface ConnectionAuthEvents {
  /** A stream on `peer` took a handshake slot: its connection is not closed while it runs. */
  handshakeStarted(peer: string): void;
  /** That handshake ended (whatever its outcome); once per {@link handshakeStarted}. */
  handshakeEnded(peer: string): void;
  /** A stream on `peer` presented a credential Control accepted: its connection is trusted. */
  authenticated(peer: string): void;
}

interface Pending {
  readonly peer: string;
  readonly socket: Socket;
  /** The per-source key counted for it; undefined when its source is not capped. */
  readonly source: string | undefined;
  timer: ClockTimer;
  handshakes: number;
}

/** The unauthenticated connections of one agent listener; see the file's TSDoc. */
export class UnauthenticatedConnections implements ConnectionAuthEvents {
  /** By peer; more than one only when two local addresses see the same remote port. */
  readonly #byPeer = new Map<string, Pending[]>();
  readonly #perSource = new Map<string, number>();
  #size = 0;

  /** @throws RangeError when an option is out of its range. */
  constructor(private readonly o: UnauthenticatedOptions) {
    if (!(o.deadlineMs > 0 && Number.isFinite(o.deadlineMs))) {
      throw new RangeError(`deadlineMs must be positive and finite, got ${o.deadlineMs}`);
    }
    if (!Number.isInteger(o.perAddress) || o.perAddress < 1) {
      throw new RangeError(`perAddress must be a positive integer, got ${o.perAddress}`);
    }
  }

  /** Connections held that have not authenticated yet. */
  get size(): number {
    return this.#size;
  }

  /**
   * Takes on a connection just accepted. False when it must be destroyed now: its source holds
   * `perAddress` unauthenticated connections already (counted and reported), or it is already
   * gone (no remote address).
   */
  admit(socket: Socket): boolean {
    const address = socket.remoteAddress;
    if (address === undefined) return false;
    const peer = socket.remotePort === undefined ? address : `${address}:${socket.remotePort}`;
    const source = (this.o.capped ?? notLoopback)(address) ? sourceKey(address) : undefined;
    if (source !== undefined) {
      const held = this.#perSource.get(source) ?? 0;
      if (held >= this.o.perAddress) {
        this.o.closed("unauthenticated_per_address", address);
        return false;
      }
      this.#perSource.set(source, held + 1);
    }
    const pending: Pending = { peer, socket, source, handshakes: 0, timer: NO_TIMER };
    pending.timer = this.#arm(pending);
    const same = this.#byPeer.get(peer);
    if (same) same.push(pending);
    else this.#byPeer.set(peer, [pending]);
    this.#size += 1;
    socket.once("close", () => this.#forget(pending));
    return true;
  }

  handshakeStarted(peer: string): void {
    for (const pending of this.#byPeer.get(peer) ?? []) pending.handshakes += 1;
  }

  handshakeEnded(peer: string): void {
    for (const pending of this.#byPeer.get(peer) ?? []) {
      if (pending.handshakes > 0) pending.handshakes -= 1;
    }
  }

  authenticated(peer: string): void {
    const same = this.#byPeer.get(peer);
    if (!same) return;
    for (const pending of [...same]) this.#forget(pending);
  }

  #arm(pending: Pending): ClockTimer {
    return scheduleOnce(this.o.clock, this.o.deadlineMs, () => this.#expire(pending));
  }

  #expire(pending: Pending): void {
    if (!this.#holds(pending)) return;
    if (pending.handshakes > 0) {
      // A stream on it is being handshaken: bounded by the handshake's own limits; the
      // connection gets another period, and is closed then unless that stream authenticated.
      pending.timer = this.#arm(pending);
      return;
    }
    this.#forget(pending);
    this.o.closed("auth_deadline", pending.socket.remoteAddress ?? pending.peer);
    pending.socket.destroy();
  }

  #holds(pending: Pending): boolean {
    return this.#byPeer.get(pending.peer)?.includes(pending) ?? false;
  }

  /** Stops tracking `pending` (authenticated or closed); idempotent. */
  #forget(pending: Pending): void {
    const same = this.#byPeer.get(pending.peer);
    const index = same?.indexOf(pending) ?? -1;
    if (!same || index < 0) return;
    pending.timer.cancel();
    if (same.length === 1) this.#byPeer.delete(pending.peer);
    else same.splice(index, 1);
    this.#size -= 1;
    const source = pending.source;
    if (source === undefined) return;
    const held = (this.#perSource.get(source) ?? 1) - 1;
    if (held > 0) this.#perSource.set(source, held);
    else this.#perSource.delete(source);
  }
}

const NO_TIMER: ClockTimer = { cancel: () => undefined };

/** True for a loopback remote address: 127.0.0.0/8, ::1 and their IPv4-mapped forms. */
export function isLoopbackAddress(address: string): boolean {
  const a = address.toLowerCase();
  const v4 = a.startsWith("::ffff:") ? a.slice(7) : a;
  return a === "::1" || (isIPv4(v4) && v4.startsWith("127."));
}

function notLoopback(address: string): boolean {
  return !isLoopbackAddress(address);
}

/**
 * The source an address is counted under: an IPv4 address (IPv4-mapped IPv6 included) as
 * itself, an IPv6 address by its /64, the smallest prefix one site is usually given (so an
 * attacker's /64 counts as one address, as it is one subscriber).
 */
export function sourceKey(address: string): string {
  const a = address.toLowerCase().replace(/%.*$/, "");
  if (a.startsWith("::ffff:") && isIPv4(a.slice(7))) return a.slice(7);
  if (isIPv4(a) || !a.includes(":")) return a;
  const [head = "", tail] = a.split("::");
  const front = head === "" ? [] : head.split(":");
  const back = tail ? tail.split(":") : [];
  const zeros = tail === undefined ? 0 : Math.max(0, 8 - front.length - back.length);
  const prefix = [...front, ...Array<string>(zeros).fill("0"), ...back].slice(0, 4);
  return `${prefix.map((g) => (g === "" ? "0" : g.replace(/^0+(?=.)/, ""))).join(":")}::/64`;
}
