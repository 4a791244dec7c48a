import { afterEach, describe, expect, it } from "vitest";
import type { FleetOptions } from "../../../agent-sim/index.js";
import { OperationPhase } from "../../../proto/gen/agentcontrol/v1/agent_control_pb.js";
import { eventually, type Harness, phases, startHarness } from "./harness.js";
import { makeRelease, upgradeOp } from "./release-fixture.js";

const NODE = "sim-00001";
let h: Harness | undefined;

afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function withBehaviour(
  behaviour: NonNullable<FleetOptions["behaviours"]>[string],
  extra: Partial<FleetOptions> = {},
) {
  h = await startHarness({ behaviours: { [NODE]: behaviour }, ...extra });
  return h;
}

async function offerUpgrade(harness: Harness, version = "1.1.0", sequence = 2) {
  const release = await makeRelease(harness.artifacts, harness.key, version, sequence);
  harness.control.send(NODE, upgradeOp("up-1", release));
  await eventually(() =>
    ["REFUSED", "FAILED", "RESTARTING"].includes(
      phases(harness.control.reports(NODE, "up-1")).at(-1) ?? "",
    ),
  );
  return phases(harness.control.reports(NODE, "up-1"));
}

describe("scripted behaviours on the wire", () => {
  it("refuse: answers REFUSED agent_refused", async () => {
    const harness = await withBehaviour({ upgrade: "refuse" });
    await harness.fleet.waitUntil((f) => f.welcomedCount() === 1);
    expect(await offerUpgrade(harness)).toEqual(["REFUSED"]);
    expect(harness.control.reports(NODE, "up-1")[0]!.code).toBe("agent_refused");
  });

  it("fail: fails to apply with apply_failed and stays on its version", async () => {
    const harness = await withBehaviour({ upgrade: "fail" });
    await harness.fleet.waitUntil((f) => f.welcomedCount() === 1);
    expect(await offerUpgrade(harness)).toEqual([
      "ACCEPTED",
      "DOWNLOADING",
      "VERIFYING",
      "APPLYING",
      "FAILED",
    ]);
    expect(harness.control.reports(NODE, "up-1").at(-1)).toMatchObject({
      code: "apply_failed",
      version: "1.0.0",
    });
    expect(harness.fleet.agent(NODE).version).toBe("1.0.0");
  });

  it("fail-versions: every agent fails to apply the listed versions", async () => {
    h = await startHarness({ failVersions: ["1.1.0"] });
    await h.fleet.waitUntil((f) => f.welcomedCount() === 1);
    expect((await offerUpgrade(h)).at(-1)).toBe("FAILED");
  });

  it("no-return: reports RESTARTING and never reconnects until told to", async () => {
    const harness = await withBehaviour({ upgrade: "no-return" });
    await harness.fleet.waitUntil((f) => f.welcomedCount() === 1);
    expect((await offerUpgrade(harness)).at(-1)).toBe("RESTARTING");
    const agent = harness.fleet.agent(NODE);
    await eventually(() => !agent.connected);
    await new Promise((r) => setTimeout(r, 400));
    expect(harness.control.sessionsOf(NODE)).toHaveLength(1);
    expect(agent.online).toBe(false);
    agent.goOnline();
    await eventually(() => agent.welcomed);
    expect(harness.control.sessionsOf(NODE)[1]!.hello!.agentVersion).toBe("1.1.0");
  });

  it("revert: restarts and comes back on the old version with a new boot id", async () => {
    const harness = await withBehaviour({ upgrade: "revert" });
    await harness.fleet.waitUntil((f) => f.welcomedCount() === 1);
    const bootId = harness.fleet.agent(NODE).bootId;
    expect((await offerUpgrade(harness)).at(-1)).toBe("RESTARTING");
    await eventually(
      () => harness.control.sessionsOf(NODE).length === 2 && harness.fleet.agent(NODE).welcomed,
    );
    const hello = harness.control.sessionsOf(NODE)[1]!.hello!;
    expect(hello.agentVersion).toBe("1.0.0");
    expect(hello.bootId).not.toBe(bootId);
  });

  it("health-fail: restarts, fails its health check, comes back on the old version and reports FAILED health_check_failed", async () => {
    const harness = await withBehaviour({ upgrade: "health-fail" });
    await harness.fleet.waitUntil((f) => f.welcomedCount() === 1);
    const bootId = harness.fleet.agent(NODE).bootId;
    expect(await offerUpgrade(harness)).toEqual([
      "ACCEPTED",
      "DOWNLOADING",
      "VERIFYING",
      "APPLYING",
      "RESTARTING",
    ]);
    await eventually(() => harness.control.reports(NODE, "up-1").length === 6);
    const second = harness.control.sessionsOf(NODE)[1]!;
    expect(second.hello).toMatchObject({ agentVersion: "1.0.0", previousVersion: "" });
    expect(second.hello!.bootId).not.toBe(bootId);
    // Reported on the stream of the version it went back to, once welcomed.
    expect(second.observed.map((o) => o.operationId)).toEqual(["up-1"]);
    expect(harness.control.reports(NODE, "up-1").at(-1)).toMatchObject({
      phase: OperationPhase.FAILED,
      code: "health_check_failed",
      version: "1.0.0",
      message:
        '1.1.0 failed health check "simulated" (simulated) exited with code 1, expected 0; reverted to 1.0.0',
    });
    const agent = harness.fleet.agent(NODE);
    expect([agent.version, agent.previousVersion, agent.applyCount("up-1")]).toEqual([
      "1.0.0",
      "",
      1,
    ]);
    // A redelivery is answered with the failure, never applied again.
    harness.control.send(
      NODE,
      upgradeOp("up-1", await makeRelease(harness.artifacts, harness.key, "1.1.0", 2)),
    );
    await eventually(() => harness.control.reports(NODE, "up-1").length === 7);
    expect(harness.control.reports(NODE, "up-1").at(-1)?.code).toBe("health_check_failed");
    expect(agent.applyCount("up-1")).toBe(1);
  });

  it("defer: answers DEFERRED with its reason before downloading, and takes the same offer afresh once not busy", async () => {
    const harness = await withBehaviour({ defer: true }, { deferChance: 1 });
    await harness.fleet.waitUntil((f) => f.welcomedCount() === 1);
    const release = await makeRelease(harness.artifacts, harness.key, "1.1.0", 2);
    harness.control.send(NODE, upgradeOp("up-1", release));
    await eventually(() => harness.control.reports(NODE, "up-1").length === 1);
    harness.control.send(NODE, upgradeOp("up-1", release));
    await eventually(() => harness.control.reports(NODE, "up-1").length === 2);
    expect(harness.control.reports(NODE, "up-1")).toMatchObject([
      {
        phase: OperationPhase.DEFERRED,
        code: "deferred",
        version: "1.0.0",
        message: "busy (simulated): a maintenance job holds the update lock",
      },
      { phase: OperationPhase.DEFERRED, code: "deferred" },
    ]);
    const agent = harness.fleet.agent(NODE);
    expect([agent.version, agent.applyCount("up-1"), harness.fleet.stats().downloads]).toEqual([
      "1.0.0",
      0,
      0,
    ]);
    agent.setBehaviour({ defer: false });
    harness.control.send(NODE, upgradeOp("up-1", release));
    await eventually(
      () =>
        harness.control.reports(NODE, "up-1").length === 7 &&
        harness.control.sessionsOf(NODE).length === 2 &&
        agent.welcomed,
    );
    expect(harness.control.sessionsOf(NODE)[1]!.hello!.agentVersion).toBe("1.1.0");
    expect(phases(harness.control.reports(NODE, "up-1")).slice(2)).toEqual([
      "ACCEPTED",
      "DOWNLOADING",
      "VERIFYING",
      "APPLYING",
      "RESTARTING",
    ]);
  });

  it("defer: on a stream that did not negotiate defer.v1, takes the upgrade instead of answering DEFERRED", async () => {
    h = await startHarness(
      { behaviours: { [NODE]: { defer: true } }, deferChance: 1 },
      { capabilities: ["upgrade.v1", "config.v1"] },
    );
    await h.fleet.waitUntil((f) => f.welcomedCount() === 1);
    expect(h.control.sessionsOf(NODE)[0]!.hello!.capabilities).toContain("defer.v1");
    expect(h.fleet.agent(NODE).capabilities).not.toContain("defer.v1");
    await offerUpgrade(h);
    expect(phases(h.control.reports(NODE, "up-1"))).not.toContain("DEFERRED");
    expect(phases(h.control.reports(NODE, "up-1")).at(-1)).toBe("RESTARTING");
  });

  it("defer: with a defer chance, defers some offers and takes others, the same ones for the same seed", async () => {
    const draws = async (seed: number) => {
      const harness = await startHarness({
        seed,
        behaviours: { [NODE]: { defer: true } },
        deferChance: 0.5,
      });
      await harness.fleet.waitUntil((f) => f.welcomedCount() === 1);
      const agent = harness.fleet.agent(NODE);
      const out: boolean[] = [];
      for (let i = 0; i < 40; i++) out.push((await agent.deferral()) !== undefined);
      await harness.close();
      return out;
    };
    const first = await draws(3);
    expect(first.filter(Boolean).length).toBeGreaterThan(10);
    expect(first.filter(Boolean).length).toBeLessThan(30);
    expect(await draws(3)).toEqual(first);
    h = await startHarness({ deferChance: 1 });
    await h.fleet.waitUntil((f) => f.welcomedCount() === 1);
    expect(await h.fleet.agent(NODE).deferral()).toBeUndefined();
  });

  it("config-fail: comes back on the new version, then reports ConfigStatus ok:false", async () => {
    const harness = await withBehaviour({ upgrade: "config-fail" }, { configFailDelayMs: 100 });
    await harness.fleet.waitUntil((f) => f.welcomedCount() === 1);
    await eventually(() => harness.control.sessionsOf(NODE)[0]!.configStatuses.length === 1);
    expect(harness.control.sessionsOf(NODE)[0]!.configStatuses[0]!.ok).toBe(true);
    await offerUpgrade(harness);
    await eventually(() => (harness.control.sessionsOf(NODE)[1]?.configStatuses.length ?? 0) === 1);
    const second = harness.control.sessionsOf(NODE)[1]!;
    expect(second.hello!.agentVersion).toBe("1.1.0");
    expect(second.configStatuses[0]!.ok).toBe(false);
    expect(second.configStatuses[0]!.message).not.toBe("");
  });

  it("no-upgrade-cap: does not offer upgrade.v1", async () => {
    const harness = await withBehaviour({ upgrade: "no-upgrade-cap" });
    await harness.fleet.waitUntil((f) => f.welcomedCount() === 1);
    expect(harness.control.sessionsOf(NODE)[0]!.hello!.capabilities).toEqual([
      "config.v1",
      "defer.v1",
    ]);
    expect(harness.fleet.agent(NODE).capabilities).toEqual(["config.v1", "defer.v1"]);
  });

  it("offline: does not connect until goOnline(), and goOffline() closes its stream", async () => {
    const harness = await withBehaviour({ offline: true });
    await new Promise((r) => setTimeout(r, 300));
    expect(harness.control.sessions).toHaveLength(0);
    const agent = harness.fleet.agent(NODE);
    agent.goOnline();
    await eventually(() => agent.welcomed);
    agent.goOffline();
    await eventually(() => harness.control.sessions[0]!.endedAt !== undefined);
    await new Promise((r) => setTimeout(r, 300));
    expect(harness.control.sessions).toHaveLength(1);
  });

  it("silent: keeps its stream open but never heartbeats", async () => {
    const harness = await withBehaviour({ silent: true }, { count: 2 });
    await harness.fleet.waitUntil((f) => f.welcomedCount() === 2);
    await new Promise((r) => setTimeout(r, 700));
    expect(harness.control.live(NODE)!.heartbeats).toHaveLength(0);
    expect(harness.control.live("sim-00002")!.heartbeats.length).toBeGreaterThan(1);
  });

  it("flap: drops its stream periodically and reconnects", async () => {
    const harness = await withBehaviour({ flap: true }, { flapMs: [100, 150] });
    await eventually(() => harness.control.sessionsOf(NODE).length >= 4, 5000);
    expect(harness.fleet.agent(NODE).bootId).toBe(
      harness.control.sessionsOf(NODE)[3]!.hello!.bootId,
    );
  });

  it("fractions pick the same agents for the same seed, and exactly round(rate × count) of them", async () => {
    const options = { count: 10, seed: 11, rates: { refuse: 0.3 } };
    h = await startHarness(options);
    await h.fleet.waitUntil((f) => f.welcomedCount() === 10);
    const release = await makeRelease(h.artifacts, h.key, "1.1.0", 2);
    for (const agent of h.fleet.agents)
      h.control.send(agent.nodeId, upgradeOp(`op-${agent.nodeId}`, release));
    const refusedBy = async (harness: Harness) => {
      await eventually(() =>
        harness.fleet.agents.every(
          (a) => harness.control.reports(a.nodeId, `op-${a.nodeId}`).length > 0,
        ),
      );
      return harness.fleet.agents
        .filter(
          (a) => harness.control.reports(a.nodeId, `op-${a.nodeId}`)[0]!.code === "agent_refused",
        )
        .map((a) => a.nodeId);
    };
    const first = await refusedBy(h);
    expect(first).toHaveLength(3);
    await h.close();
    h = await startHarness(options);
    await h.fleet.waitUntil((f) => f.welcomedCount() === 10);
    const again = await makeRelease(h.artifacts, h.key, "1.1.0", 2);
    for (const agent of h.fleet.agents)
      h.control.send(agent.nodeId, upgradeOp(`op-${agent.nodeId}`, again));
    expect(await refusedBy(h)).toEqual(first);
  });

  it("labels pools and canaries", async () => {
    h = await startHarness({ count: 5, poolCount: 2, canaryCount: 2, labels: { region: "eu" } });
    await h.fleet.waitUntil((f) => f.welcomedCount() === 5);
    const labels = h.fleet.agents.map((a) => ({
      ...h!.control.sessionsOf(a.nodeId)[0]!.hello!.labels,
    }));
    expect(labels).toEqual([
      { region: "eu", pool: "pool-1", canary: "true" },
      { region: "eu", pool: "pool-2", canary: "true" },
      { region: "eu", pool: "pool-1" },
      { region: "eu", pool: "pool-2" },
      { region: "eu", pool: "pool-1" },
    ]);
  });
});
