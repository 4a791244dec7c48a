/**
 * Security review finding 1: connections that never authenticate a stream cannot lock agents
 * out of the agent listener. An attacker fills its `maxConnections` with connections that send
 * nothing, only the HTTP/2 preface (or only a TLS ClientHello), or a whole HTTP/2 session
 * without a stream; new agents are then closed at accept. Each of those connections is
 * destroyed `timeouts.agentConnectionAuthSeconds` after it was accepted (on Control's Clock,
 * manual here), after which a real agent is welcomed; its connection, authenticated, outlives
 * any number of deadlines.
 */
import { connect, type Socket } from "node:net";
import { Duplex } from "node:stream";
import { connect as tlsConnect } from "node:tls";
import * as grpc from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { streamBudget } from "../../control/agents/stream-budget.js";
import { ManualClock } from "../../control/manual-clock.js";
import { readOpenFileLimit } from "../../control/shared/open-file-limit.js";
import { channelCredentials, tlsConfig } from "../fixtures/tls/index.js";
import { startTestControl, type TestControl } from "../helpers/control.js";
import { eventually, hello, openRawStream } from "../helpers/raw-agent.js";

const T0 = Date.parse("2026-03-01T10:00:00Z");
const AUTH_SECONDS = 10;
const MAX_STREAMS = 2;
/** The connection cap Control derives for MAX_STREAMS (10: 8 above the streams). */
const CAP = streamBudget(MAX_STREAMS, readOpenFileLimit()).maxConnections;
const CLOSED =
  'agent_control_agent_connections_unauthenticated_closed_total{reason="auth_deadline"}';

/** The HTTP/2 client preface and an empty SETTINGS frame: what a client sends first. */
const H2_PREFACE = Buffer.concat([
  Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"),
  Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0]),
]);

/** The bytes of a TLS ClientHello, as Node.js's TLS client writes it first. */
function clientHello(): Promise<Buffer> {
  return new Promise((resolve) => {
    const sink = new Duplex({
      read() {},
      write(chunk: Buffer, _encoding, callback) {
        resolve(Buffer.from(chunk));
        callback();
        queueMicrotask(() => client.destroy());
      },
    });
    const client = tlsConnect({ socket: sink, servername: "localhost" });
    client.on("error", () => undefined);
  });
}

function seriesValue(text: string, series: string): number {
  for (const line of text.split("\n")) {
    if (line.startsWith(`${series} `)) return Number(line.slice(series.length + 1));
  }
  return Number.NaN;
}

interface Held {
  readonly kind: string;
  readonly closed: () => boolean;
  destroy(): void;
}

/** A TCP connection that sends `bytes` (nothing when empty), then nothing more. */
function rawConnection(address: string, kind: string, bytes: Buffer): Promise<Held> {
  const [host, port] = address.split(":");
  return new Promise((resolve, reject) => {
    let closed = false;
    const socket: Socket = connect({ host, port: Number(port) }, () => {
      if (bytes.length > 0) socket.write(bytes);
      resolve({ kind, closed: () => closed, destroy: () => socket.destroy() });
    });
    socket.on("data", () => undefined);
    socket.on("error", () => undefined);
    socket.once("error", reject);
    socket.once("close", () => {
      closed = true;
    });
  });
}

/** A grpc-js channel that connects (TLS and HTTP/2 settings done) and opens no stream. */
async function idleChannel(address: string, credentials: grpc.ChannelCredentials): Promise<Held> {
  const client = new grpc.Client(address, credentials);
  await new Promise<void>((resolve, reject) =>
    client.waitForReady(Date.now() + 10_000, (error) => (error ? reject(error) : resolve())),
  );
  const channel = client.getChannel();
  return {
    kind: "HTTP/2 session without a stream",
    closed: () => channel.getConnectivityState(false) !== grpc.connectivityState.READY,
    destroy: () => client.close(),
  };
}

describe.each([
  { transport: "clear text", tls: false },
  { transport: "TLS", tls: true },
])("silent connections on the agent listener ($transport)", { timeout: 60_000 }, ({ tls }) => {
  const clock = new ManualClock(T0);
  let tc: TestControl;
  const held: Held[] = [];
  const credentials = tls ? channelCredentials().credentials : grpc.credentials.createInsecure();
  const scrape = async () => await (await fetch(`${tc.adminUrl}/metrics`)).text();

  beforeAll(async () => {
    tc = await startTestControl({
      clock,
      config: {
        limits: { maxStreams: MAX_STREAMS },
        timeouts: { agentConnectionAuthSeconds: AUTH_SECONDS },
        ...(tls ? { tls: tlsConfig() } : {}),
      },
    });
  });
  afterAll(async () => {
    for (const h of held) h.destroy();
    await tc?.stop();
  });

  it(`are closed ${AUTH_SECONDS} s after accept, after which a real agent gets in and stays`, async () => {
    expect(CAP).toBe(MAX_STREAMS + 8);
    const opening = tls ? await clientHello() : H2_PREFACE;
    held.push(await idleChannel(tc.agentAddress, credentials));
    for (let i = 0; i < 3; i++) {
      const kind = tls ? "TLS ClientHello only" : "HTTP/2 preface only";
      held.push(await rawConnection(tc.agentAddress, kind, opening));
    }
    while (held.length < CAP) {
      held.push(await rawConnection(tc.agentAddress, "silent", Buffer.alloc(0)));
    }
    await eventually(
      async () => seriesValue(await scrape(), "agent_control_agent_connections") === CAP,
      10_000,
      `the listener holding ${CAP} connections`,
    );

    // The attack holds: a real agent is closed at accept.
    const join = await tc.joinToken();
    const locked = openRawStream(tc.agentAddress, join, { credentials });
    locked.send(hello("locked-out-1"));
    expect((await locked.ended).code).toBe(grpc.status.UNAVAILABLE);

    // Just before the deadline nothing is closed; at it, every one of them is.
    clock.advance(AUTH_SECONDS * 1000 - 1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(held.filter((h) => h.closed()).map((h) => h.kind)).toEqual([]);
    clock.advance(1);
    await eventually(() => held.every((h) => h.closed()), 10_000, "every connection closed");
    await eventually(
      async () => seriesValue(await scrape(), "agent_control_agent_connections") === 0,
      10_000,
      "the listener holding none",
    );
    expect(seriesValue(await scrape(), CLOSED)).toBe(CAP);

    // A real agent is welcomed now, and its connection outlives later deadlines.
    const agent = openRawStream(tc.agentAddress, join, { credentials });
    agent.send(hello("after-the-flood-1"));
    const welcome = await agent.next(10_000);
    expect(welcome.body.case).toBe("welcome");
    clock.advance(AUTH_SECONDS * 1000 * 3);
    agent.send({ body: { case: "heartbeat", value: {} } });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(tc.control.hub.size).toBe(1);
    const text = await scrape();
    expect(seriesValue(text, CLOSED)).toBe(CAP);
    expect(seriesValue(text, "agent_control_agent_connections")).toBe(1);
    expect(seriesValue(text, "agent_control_agent_connections_unauthenticated")).toBe(0);
    agent.close();
    expect((await agent.ended).code).toBe(grpc.status.OK);
  });
});
