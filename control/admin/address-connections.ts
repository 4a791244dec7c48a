/**
 * The admin port's connections per remote address (`limits.adminConnectionsPerAddress`): one
 * address (an IPv6 /64, as on the agent port) holds at most `perAddress` connections at once,
 * whether or not they carry a token; the next is closed as soon as it is accepted. Without it,
 * one client with no credential could open connections until `limits.adminMaxConnections` were
 * all its own, locking out operators, the dashboard and `/readyz`. A refusal is logged at most
 * once per address per `logIntervalMs` (of the Clock), with how many were closed since.
 */
import type { Server as NetServer, Socket } from "node:net";
import { sourceKey } from "../agents/unauthenticated-connections.js";
import type { Clock } from "../clock.js";
import type { Logger } from "../log.js";

/** Options of {@link boundConnectionsPerAddress}. */
export interface AddressConnectionsOptions {
  /** Connections one address holds at once (≥ 1). */
  readonly perAddress: number;
  readonly clock: Clock;
  readonly log: Logger;
  /** At most one log line per address per this many ms (default one minute). */
  readonly logIntervalMs?: number;
  /** Told of each connection closed for its address's bound (for `/metrics`). */
  readonly refused: () => void;
}

/** The log line of a refusal. */
export const PER_ADDRESS_LOG =
  "admin listener: closed connections over their address's share (limits.adminConnectionsPerAddress)";

/** Keys of the refusal log kept at most (the oldest is forgotten beyond). */
const MAX_LOGGED_ADDRESSES = 10_000;

/** Applies the bound to the TCP connections `server` accepts. */
export function boundConnectionsPerAddress(server: NetServer, o: AddressConnectionsOptions): void {
  const open = new Map<string, number>();
  const logged = new Map<string, { at: number; closed: number }>();
  const interval = o.logIntervalMs ?? 60_000;
  server.on("connection", (socket: Socket) => {
    const address = socket.remoteAddress;
    if (address === undefined) return;
    const key = sourceKey(address);
    const held = open.get(key) ?? 0;
    if (held >= o.perAddress) {
      socket.destroy();
      o.refused();
      const now = o.clock.now().getTime();
      const last = logged.get(key);
      if (last && now - last.at < interval && now >= last.at) {
        last.closed += 1;
        return;
      }
      logged.delete(key);
      logged.set(key, { at: now, closed: 0 });
      if (logged.size > MAX_LOGGED_ADDRESSES) {
        logged.delete(logged.keys().next().value as string);
      }
      o.log.warn(
        { address: key, perAddress: o.perAddress, closedBefore: last?.closed ?? 0 },
        PER_ADDRESS_LOG,
      );
      return;
    }
    open.set(key, held + 1);
    socket.once("close", () => {
      const now = (open.get(key) ?? 1) - 1;
      if (now <= 0) open.delete(key);
      else open.set(key, now);
    });
  });
}
