import * as grpc from "@grpc/grpc-js";
import { afterEach, describe, expect, it } from "vitest";
import { type Fleet, startFleet } from "../../../agent-sim/index.js";
import { FakeControl } from "./fake-control.js";

let control: FakeControl | undefined;
let fleet: Fleet | undefined;

afterEach(async () => {
  await fleet?.stop();
  await control?.stop();
  fleet = undefined;
  control = undefined;
});

describe("simulated agents on the stream", () => {
  it("enroll with the join token, then reconnect with the node token they were given", async () => {
    control = await new FakeControl().start();
    fleet = await startFleet({ server: control.address, joinToken: "join-secret", count: 3 });
    await fleet.waitUntil((f) => f.welcomedCount() === 3, 5000, "3 welcomed");
    const agent = fleet.agent("sim-00002");
    const first = control.sessionsOf("sim-00002")[0]!;
    expect(first.token).toBe("join-secret");
    expect(first.hello?.capabilities).toEqual(["upgrade.v1", "config.v1", "defer.v1"]);
    expect(first.hello?.agentVersion).toBe("1.0.0");
    expect(first.hello?.platform).toBe("linux-amd64");
    expect(agent.hasNodeToken).toBe(true);
    const bootId = agent.bootId;
    control.end("sim-00002", grpc.status.UNAVAILABLE);
    await fleet.waitUntil(() => control!.sessionsOf("sim-00002").length === 2 && agent.welcomed);
    const second = control.sessionsOf("sim-00002")[1]!;
    expect(second.token).toBe(first.issuedToken);
    expect(second.issuedToken).toBeUndefined();
    expect(second.hello?.bootId).toBe(bootId); // a reconnect is not a restart
  });

  it("heartbeats at the welcomed interval", async () => {
    control = await new FakeControl({ heartbeatMs: 100 }).start();
    fleet = await startFleet({
      server: control.address,
      joinToken: "join-secret",
      count: 2,
      tickMs: 10,
    });
    await fleet.waitUntil((f) => f.welcomedCount() === 2);
    await new Promise((r) => setTimeout(r, 1050));
    for (const nodeId of ["sim-00001", "sim-00002"]) {
      const beats = control.live(nodeId)!.heartbeats;
      expect(beats.length).toBeGreaterThanOrEqual(8);
      expect(beats.length).toBeLessThanOrEqual(12);
      const mean = (beats.at(-1)! - beats[0]!) / (beats.length - 1);
      expect(mean).toBeGreaterThan(85);
      expect(mean).toBeLessThan(125);
    }
  });

  it("sends ConfigStatus ok after Welcome when config.v1 was negotiated", async () => {
    control = await new FakeControl().start();
    fleet = await startFleet({ server: control.address, joinToken: "join-secret", count: 1 });
    await fleet.waitUntil(() => control!.live("sim-00001")?.configStatuses.length === 1);
    expect(control.live("sim-00001")!.configStatuses[0]!.ok).toBe(true);
  });

  it("reconnects with backoff after Control ends the stream", async () => {
    control = await new FakeControl().start();
    fleet = await startFleet({
      server: control.address,
      joinToken: "join-secret",
      count: 1,
      backoff: { baseMs: 100, capMs: 400, resetAfterMs: 60_000 },
    });
    const agent = fleet.agent("sim-00001");
    for (let i = 1; i <= 4; i++) {
      await fleet.waitUntil(() => control!.sessionsOf("sim-00001").length === i && agent.welcomed);
      control.end("sim-00001", grpc.status.UNAVAILABLE, "shutting down");
    }
    await fleet.waitUntil(() => control!.sessionsOf("sim-00001").length === 5, 5000);
    expect(agent.lastStatus).toBe(grpc.status.UNAVAILABLE);
    const sessions = control.sessionsOf("sim-00001");
    const gaps = sessions.slice(1).map((s, i) => s.openedAt - sessions[i]!.endedAt!);
    for (const gap of gaps) expect(gap).toBeLessThan(400 + 400); // cap plus connect time under load
  });

  it("drops a rejected node token and enrolls again with the join token", async () => {
    control = await new FakeControl().start();
    fleet = await startFleet({
      server: control.address,
      joinToken: "join-secret",
      count: 1,
      backoff: { baseMs: 20, capMs: 50, resetAfterMs: 60_000 },
    });
    const agent = fleet.agent("sim-00001");
    await fleet.waitUntil(() => agent.welcomed);
    control.revoke("sim-00001");
    control.end("sim-00001", grpc.status.UNAVAILABLE);
    await fleet.waitUntil(() => control!.refusals.length === 1 && agent.welcomed, 5000);
    const tokens = control.sessionsOf("sim-00001").map((s) => s.token);
    expect(tokens[0]).toBe("join-secret");
    expect(tokens[1]).toMatch(/^node-/);
    expect(tokens.at(-1)).toBe("join-secret");
    expect(agent.hasNodeToken).toBe(true);
  });

  it("keeps backing off on a rejected token when there is no join token to fall back to", async () => {
    control = await new FakeControl().start();
    fleet = await startFleet({
      server: control.address,
      joinToken: "wrong",
      count: 1,
      backoff: { baseMs: 20, capMs: 80, resetAfterMs: 60_000 },
    });
    await fleet.waitUntil(() => control!.refusals.length >= 4, 5000);
    expect(fleet.agent("sim-00001").welcomed).toBe(false);
    expect(fleet.agent("sim-00001").lastStatus).toBe(grpc.status.UNAUTHENTICATED);
  });

  it("reconnects everyone after a reconnect storm, and stops cleanly", async () => {
    control = await new FakeControl().start();
    fleet = await startFleet({
      server: control.address,
      joinToken: "join-secret",
      count: 20,
      backoff: { baseMs: 50, capMs: 200, resetAfterMs: 60_000 },
    });
    await fleet.waitUntil((f) => f.welcomedCount() === 20);
    fleet.dropAllStreams();
    await fleet.waitUntil(
      () => control!.sessions.length === 40 && fleet!.welcomedCount() === 20,
      5000,
    );
    await fleet.stop();
    expect(fleet.connectedCount()).toBe(0);
    await new Promise((r) => setTimeout(r, 100));
    expect(control.sessions.every((s) => s.endedAt !== undefined)).toBe(true);
  });

  it("ramps up at most --connect-rate new connections per second", async () => {
    control = await new FakeControl().start();
    const started = Date.now();
    fleet = await startFleet({
      server: control.address,
      joinToken: "join-secret",
      count: 10,
      connectRate: 20,
    });
    await fleet.waitUntil((f) => f.welcomedCount() === 10);
    const opened = control.sessions.map((s) => s.openedAt - started).sort((a, b) => a - b);
    expect(opened.at(-1)!).toBeGreaterThanOrEqual(400);
  });

  it("gives up on a stream that is never welcomed and tries again", async () => {
    control = await new FakeControl({ welcome: false }).start();
    fleet = await startFleet({
      server: control.address,
      joinToken: "join-secret",
      count: 1,
      welcomeTimeoutMs: 150,
      backoff: { baseMs: 20, capMs: 50, resetAfterMs: 60_000 },
    });
    await fleet.waitUntil(() => control!.sessions.length >= 3, 5000);
    const first = control.sessions[0]!;
    expect(first.endedAt! - first.openedAt).toBeGreaterThanOrEqual(80); // the timer starts before the connection
    expect(fleet.agent("sim-00001").lastStatus).toBe(grpc.status.CANCELLED);
  });
});
