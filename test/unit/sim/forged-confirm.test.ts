import { afterEach, describe, expect, it } from "vitest";
import { eventually, type Harness, phases, startHarness } from "./harness.js";
import { confirmOp, makeRelease, upgradeOp } from "./release-fixture.js";

const NODE = "sim-00001";
const U64_MAX = 2n ** 64n - 1n;
let h: Harness | undefined;

afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function upgradedTo(harness: Harness, version: string, sequence: number, opId: string) {
  const release = await makeRelease(harness.artifacts, harness.key, version, sequence);
  const streams = harness.control.sessionsOf(NODE).length;
  harness.control.send(NODE, upgradeOp(opId, release));
  const agent = harness.fleet.agent(NODE);
  await eventually(() => harness.control.sessionsOf(NODE).length > streams && agent.welcomed);
  expect(agent.version).toBe(version);
}

async function reportOf(harness: Harness, opId: string) {
  await eventually(() => harness.control.reports(NODE, opId).length >= 1, 5000, opId);
  return harness.control.reports(NODE, opId).at(-1)!;
}

describe("a confirm raises the floor only to the sequence of the release the agent verified", () => {
  it("refuses a forged confirm of sequence 2^64-1 and still accepts a signed release at sequence 6", async () => {
    h = await startHarness();
    await h.fleet.waitUntil((f) => f.welcomedCount() === 1);
    const agent = h.fleet.agent(NODE);
    await upgradedTo(h, "1.1.0", 2, "up-1");
    const forged = confirmOp("cf-forged", "1.1.0", 0);
    if (forged.kind.case === "agentConfirm") forged.kind.value.sequence = U64_MAX;
    h.control.send(NODE, forged);
    const report = await reportOf(h, "cf-forged");
    expect(phases([report])).toEqual(["FAILED"]);
    expect(report.code).toBe("confirm_mismatch");
    expect(report.message).toContain("sequence 2");
    expect(agent.confirmedSequence).toBe(0n);
    await upgradedTo(h, "1.2.0", 6, "up-2");
    expect(phases(h.control.reports(NODE, "up-2")).at(-1)).toBe("RESTARTING");
  });

  it("refuses a confirm whose sequence is below the verified release's and keeps the floor", async () => {
    h = await startHarness();
    await h.fleet.waitUntil((f) => f.welcomedCount() === 1);
    await upgradedTo(h, "1.1.0", 7, "up-1");
    h.control.send(NODE, confirmOp("cf-low", "1.1.0", 3));
    expect((await reportOf(h, "cf-low")).code).toBe("confirm_mismatch");
    expect(h.fleet.agent(NODE).confirmedSequence).toBe(0n);
  });

  it("raises the floor to exactly the verified sequence on a matching confirm, durably", async () => {
    h = await startHarness();
    await h.fleet.waitUntil((f) => f.welcomedCount() === 1);
    const agent = h.fleet.agent(NODE);
    await upgradedTo(h, "1.1.0", 7, "up-1");
    h.control.send(NODE, confirmOp("cf-1", "1.1.0", 7));
    expect(phases([await reportOf(h, "cf-1")])).toEqual(["CONFIRMED"]);
    expect(agent.confirmedSequence).toBe(7n);
  });

  it("confirms the version it was installed with but never raises the floor for a sequence it did not verify", async () => {
    h = await startHarness();
    await h.fleet.waitUntil((f) => f.welcomedCount() === 1);
    const forged = confirmOp("cf-initial", "1.0.0", 0);
    if (forged.kind.case === "agentConfirm") forged.kind.value.sequence = U64_MAX;
    h.control.send(NODE, forged);
    const report = await reportOf(h, "cf-initial");
    expect(phases([report])).toEqual(["CONFIRMED"]);
    expect(h.fleet.agent(NODE).confirmedSequence).toBe(0n);
  });
});
