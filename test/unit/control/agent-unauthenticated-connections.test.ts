/**
 * The agent listener bounds a connection until a stream on it authenticates (security review
 * finding 1): silent connections that fill `maxConnections` are destroyed at the deadline on
 * Control's Clock, so new connections are held again; an authenticated connection, or one
 * whose stream is being handshaken, is not; and one source address holds at most
 * `perAddress` unauthenticated connections (loopback is not counted by default). Real
 * sockets on loopback, a manual clock: nothing here waits for a wall-clock timeout.
 */
import { connect, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { throttledCloseLog } from "../../../control/agents/close-log.js";
import { type CappedListener, listenCapped } from "../../../control/agents/connection-cap.js";
import {
  type UnauthenticatedClose,
  UnauthenticatedConnections,
} from "../../../control/agents/unauthenticated-connections.js";
import { createLogger } from "../../../control/log.js";
import { ManualClock } from "../../../control/manual-clock.js";

const DEADLINE_MS = 10_000;
let listener: CappedListener | undefined;
const sockets: Socket[] = [];

afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  listener?.destroyAll();
  await listener?.close();
  listener = undefined;
});

/** Lets the event loop deliver what is already due (closes, accepts). */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 2000 && !condition(); i++) await new Promise((r) => setTimeout(r, 5));
  if (!condition()) throw new Error(`never: ${what}`);
}

interface Client {
  readonly socket: Socket;
  /** `address:port` of this client as the server sees it (grpc-js's getPeer). */
  readonly peer: string;
  closed: boolean;
}

/** Opens a TCP connection that sends nothing; resolves once connected. */
function silent(port: number): Promise<Client> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => {
      client = { socket, peer: `127.0.0.1:${socket.localPort}`, closed: false };
      socket.once("close", () => {
        client.closed = true;
      });
      resolve(client);
    });
    let client: Client;
    socket.on("error", () => {});
    socket.once("error", reject);
    sockets.push(socket);
  });
}

async function start(
  options: { maxConnections?: number; perAddress?: number; capLoopback?: boolean } = {},
) {
  const clock = new ManualClock(1_000_000);
  const closes: UnauthenticatedClose[] = [];
  const unauthenticated = new UnauthenticatedConnections({
    deadlineMs: DEADLINE_MS,
    perAddress: options.perAddress ?? 32,
    clock,
    closed: (reason) => closes.push(reason),
    ...(options.capLoopback ? { capped: () => true } : {}),
  });
  let dropped = 0;
  listener = await listenCapped({
    address: { host: "127.0.0.1", port: 0 },
    maxConnections: options.maxConnections ?? 100,
    accept: () => undefined,
    dropped: () => dropped++,
    unauthenticated,
    log: createLogger({ level: "silent" }),
  });
  const l = listener;
  return { clock, closes, unauthenticated, listener: l, dropped: () => dropped };
}

describe("the agent listener's bound on unauthenticated connections", () => {
  it("destroys silent connections that fill maxConnections at the deadline, after which a new connection is held", async () => {
    const w = await start({ maxConnections: 3 });
    const held = [await silent(w.listener.port), await silent(w.listener.port)];
    held.push(await silent(w.listener.port));
    await until(() => w.listener.connections === 3, "3 connections held");

    // The attack: every slot is held, so the next connection is closed at accept.
    const refused = await silent(w.listener.port);
    await until(() => refused.closed, "the 4th closed at accept");
    expect(w.dropped()).toBe(1);

    w.clock.advance(DEADLINE_MS - 1);
    await settle();
    expect(held.map((c) => c.closed)).toEqual([false, false, false]);
    expect(w.unauthenticated.size).toBe(3);

    w.clock.advance(1);
    await until(() => held.every((c) => c.closed), "the silent connections destroyed");
    expect(w.closes).toEqual(["auth_deadline", "auth_deadline", "auth_deadline"]);
    await until(() => w.listener.connections === 0, "their slots free");

    const agent = await silent(w.listener.port);
    await until(() => w.listener.connections === 1, "a new connection held");
    expect(agent.closed).toBe(false);
  });

  it("clears the deadline of a connection once a stream on it authenticated", async () => {
    const w = await start();
    const agent = await silent(w.listener.port);
    const other = await silent(w.listener.port);
    await until(() => w.unauthenticated.size === 2, "both held");
    w.unauthenticated.authenticated(agent.peer);
    expect(w.unauthenticated.size).toBe(1);

    w.clock.advance(DEADLINE_MS * 10);
    await until(() => other.closed, "the unauthenticated one destroyed");
    await settle();
    expect(agent.closed).toBe(false);
    expect(w.closes).toEqual(["auth_deadline"]);
  });

  it("keeps a connection whose stream is being handshaken at the deadline, and closes it one deadline after that handshake failed", async () => {
    const w = await start();
    const c = await silent(w.listener.port);
    await until(() => w.unauthenticated.size === 1, "held");
    w.unauthenticated.handshakeStarted(c.peer);
    w.clock.advance(DEADLINE_MS);
    await settle();
    expect(c.closed).toBe(false);

    w.unauthenticated.handshakeEnded(c.peer); // refused: a bad token
    w.clock.advance(DEADLINE_MS - 1);
    await settle();
    expect(c.closed).toBe(false);
    w.clock.advance(1);
    await until(() => c.closed, "destroyed at the next deadline");
    expect(w.closes).toEqual(["auth_deadline"]);
  });

  it("closes at accept a source's connection beyond perAddress unauthenticated ones, and takes one again once one authenticated", async () => {
    const w = await start({ perAddress: 2, capLoopback: true });
    const first = await silent(w.listener.port);
    await silent(w.listener.port);
    await until(() => w.unauthenticated.size === 2, "two held");
    const third = await silent(w.listener.port);
    await until(() => third.closed, "the third closed at accept");
    expect(w.closes).toEqual(["unauthenticated_per_address"]);
    expect(w.dropped()).toBe(0);

    w.unauthenticated.authenticated(first.peer);
    const fourth = await silent(w.listener.port);
    await until(() => w.unauthenticated.size === 2, "the fourth held");
    expect(fourth.closed).toBe(false);
    expect(w.listener.connections).toBe(3);
  });

  it("does not count loopback connections per address by default (the simulator's thousands)", async () => {
    const w = await start({ perAddress: 1 });
    const clients = await Promise.all([0, 1, 2, 3].map(() => silent(w.listener.port)));
    await until(() => w.unauthenticated.size === 4, "all four held");
    expect(clients.some((c) => c.closed)).toBe(false);
    expect(w.closes).toEqual([]);
  });

  it("refuses bad bounds with a message naming them", () => {
    const clock = new ManualClock();
    const closed = () => undefined;
    expect(
      () => new UnauthenticatedConnections({ deadlineMs: 0, perAddress: 1, clock, closed }),
    ).toThrow(/deadlineMs must be positive/);
    expect(
      () => new UnauthenticatedConnections({ deadlineMs: 1, perAddress: 0.5, clock, closed }),
    ).toThrow(/perAddress must be a positive integer/);
  });
});

describe("the log of closed unauthenticated connections", () => {
  it("writes at most one line per interval, counting every close by reason", () => {
    const lines: unknown[] = [];
    const log = createLogger({ level: "silent" });
    log.warn = ((fields: unknown) => {
      lines.push(fields);
    }) as typeof log.warn;
    const clock = new ManualClock(0);
    const report = throttledCloseLog(log, clock, 60_000);
    report("auth_deadline", "192.0.2.1");
    for (let i = 0; i < 999; i++) report("auth_deadline", "192.0.2.1");
    report("unauthenticated_per_address", "192.0.2.2");
    expect(lines).toHaveLength(1);
    clock.advance(60_000);
    report("auth_deadline", "192.0.2.3");
    expect(lines).toEqual([
      { closed: { auth_deadline: 1 }, lastAddress: "192.0.2.1" },
      {
        closed: { auth_deadline: 1000, unauthenticated_per_address: 1 },
        lastAddress: "192.0.2.3",
      },
    ]);
  });
});
