import { afterEach, describe, expect, it } from "vitest";
import { eventually, type Harness, phases, startHarness } from "./harness.js";
import { confirmOp, makeRelease, rollbackOp, upgradeOp } from "./release-fixture.js";

const NODE = "sim-00001";
let h: Harness | undefined;

afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function upgraded(harness: Harness, opId = "up-1") {
  const release = await makeRelease(harness.artifacts, harness.key, "1.1.0", 2);
  const streams = harness.control.sessionsOf(NODE).length;
  harness.control.send(NODE, upgradeOp(opId, release));
  const agent = harness.fleet.agent(NODE);
  await eventually(() => harness.control.sessionsOf(NODE).length > streams && agent.welcomed);
  expect(agent.version).toBe("1.1.0");
  return release;
}

describe("operation delivery and the rollback and confirm operations", () => {
  it("does not apply a redelivered upgrade again, but re-sends its last report", async () => {
    h = await startHarness();
    await h.fleet.waitUntil((f) => f.welcomedCount() === 1);
    const agent = h.fleet.agent(NODE);
    const release = await upgraded(h);
    const bootId = agent.bootId;
    h.control.send(NODE, upgradeOp("up-1", release));
    await eventually(() => h!.control.live(NODE)!.observed.length === 1);
    expect(phases(h.control.live(NODE)!.observed)).toEqual(["RESTARTING"]);
    await new Promise((r) => setTimeout(r, 200));
    expect(agent.bootId).toBe(bootId);
    expect(agent.applyCount("up-1")).toBe(1);
    expect(h.fleet.stats()).toMatchObject({ duplicateApplications: 0, duplicatesIgnored: 1 });
    expect(h.control.sessionsOf(NODE)).toHaveLength(2);
  });

  it("answers a redelivery that arrives while the upgrade is still running without starting it twice", async () => {
    h = await startHarness({ stepMs: 100 });
    await h.fleet.waitUntil((f) => f.welcomedCount() === 1);
    const release = await makeRelease(h.artifacts, h.key, "1.1.0", 2);
    h.control.send(NODE, upgradeOp("up-1", release));
    h.control.send(NODE, upgradeOp("up-1", release));
    await eventually(() => h!.control.reports(NODE, "up-1").length >= 2);
    h.control.send(NODE, upgradeOp("up-1", release));
    const agent = h.fleet.agent(NODE);
    await eventually(() => h!.control.sessionsOf(NODE).length === 2 && agent.welcomed);
    await new Promise((r) => setTimeout(r, 200));
    expect(agent.version).toBe("1.1.0");
    expect(agent.applyCount("up-1")).toBe(1);
    expect(h.artifacts.hits.get("/1.1.0/linux-amd64")).toBe(1);
    expect(h.control.sessionsOf(NODE)).toHaveLength(2);
  });

  it("rolls back: restarts with a new boot id on the previous version and reports REINSTATED", async () => {
    h = await startHarness();
    await h.fleet.waitUntil((f) => f.welcomedCount() === 1);
    const agent = h.fleet.agent(NODE);
    await upgraded(h);
    const bootId = agent.bootId;
    h.control.send(NODE, rollbackOp("rb-1", "1.0.0"));
    await eventually(() => phases(h!.control.reports(NODE, "rb-1")).includes("REINSTATED"));
    expect(phases(h.control.reports(NODE, "rb-1"))).toEqual([
      "ACCEPTED",
      "RESTARTING",
      "REINSTATED",
    ]);
    const last = h.control.sessionsOf(NODE).at(-1)!;
    expect(last.hello).toMatchObject({ agentVersion: "1.0.0", previousVersion: "1.1.0" });
    expect(last.hello!.bootId).not.toBe(bootId);
    expect(last.observed.map((o) => [o.operationId, o.version])).toEqual([["rb-1", "1.0.0"]]);
    expect(agent.applyCount("rb-1")).toBe(1);
  });

  it("answers REINSTATED at once when already on the rollback's version", async () => {
    h = await startHarness();
    await h.fleet.waitUntil((f) => f.welcomedCount() === 1);
    h.control.send(NODE, rollbackOp("rb-1", "1.0.0"));
    await eventually(() => h!.control.reports(NODE, "rb-1").length === 1);
    expect(phases(h.control.reports(NODE, "rb-1"))).toEqual(["REINSTATED"]);
    expect(h.control.sessionsOf(NODE)).toHaveLength(1);
  });

  it("confirms: the confirmed sequence becomes durable and older releases are refused", async () => {
    h = await startHarness();
    await h.fleet.waitUntil((f) => f.welcomedCount() === 1);
    const agent = h.fleet.agent(NODE);
    await upgraded(h);
    h.control.send(NODE, confirmOp("cf-1", "1.1.0", 2));
    await eventually(() => h!.control.reports(NODE, "cf-1").length === 1);
    expect(h.control.reports(NODE, "cf-1")[0]).toMatchObject({ version: "1.1.0" });
    expect(phases(h.control.reports(NODE, "cf-1"))).toEqual(["CONFIRMED"]);
    expect(agent.confirmedSequence).toBe(2n);
    agent.disconnect();
    await eventually(() => h!.control.sessionsOf(NODE).length === 3 && agent.welcomed);
    expect(h.control.sessionsOf(NODE)[2]!.hello!.confirmedSequence).toBe(2n);
    const old = await makeRelease(h.artifacts, h.key, "1.0.5", 1);
    h.control.send(NODE, upgradeOp("up-old", old));
    await eventually(() => h!.control.reports(NODE, "up-old").length === 1);
    expect(h.control.reports(NODE, "up-old")[0]!.code).toBe("sequence_rollback");
  });

  it("refuses to confirm a version it does not run", async () => {
    h = await startHarness();
    await h.fleet.waitUntil((f) => f.welcomedCount() === 1);
    h.control.send(NODE, confirmOp("cf-1", "2.0.0", 5));
    await eventually(() => h!.control.reports(NODE, "cf-1").length === 1);
    expect(h.control.reports(NODE, "cf-1")[0]).toMatchObject({ code: "version_mismatch" });
    expect(h.fleet.agent(NODE).confirmedSequence).toBe(0n);
  });

  it("cannot reinstate a version that is not its previous one", async () => {
    h = await startHarness();
    await h.fleet.waitUntil((f) => f.welcomedCount() === 1);
    await upgraded(h);
    h.control.send(NODE, rollbackOp("rb-1", "0.9.0"));
    await eventually(() => h!.control.reports(NODE, "rb-1").length === 1);
    expect(h.control.reports(NODE, "rb-1")[0]).toMatchObject({
      code: "no_previous_version",
      version: "1.1.0",
    });
    h.control.send(NODE, rollbackOp("rb-2", ""));
    await eventually(() => phases(h!.control.reports(NODE, "rb-2")).includes("REINSTATED"));
    expect(h.fleet.agent(NODE).version).toBe("1.0.0");
  });
});
