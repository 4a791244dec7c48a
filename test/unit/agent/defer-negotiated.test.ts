/**
 * The Agent answers DEFERRED only on a session whose Welcome included `defer.v1` (SPEC §10).
 * Busy on a session that did not negotiate it, it neither applies the upgrade nor sends a
 * DEFERRED Control did not agree to: it refuses the offer `defer_unsupported`, naming why it is
 * busy, and downloads nothing.
 */
import { rm } from "node:fs/promises";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { AgentState } from "../../../agent/agent-state.js";
import { deliverOperation, type OperationHost } from "../../../agent/core/operations.js";
import { readCurrent } from "../../../agent/install-dir.js";
import type { ReleaseKeyPair } from "../../../control/shared/release/index.js";
import { OperationPhase } from "../../../proto/gen/agentcontrol/v1/agent_control_pb.js";
import { ArtifactServer, makeRelease, newKey, upgradeOp } from "../sim/release-fixture.js";
import { type TestAgentHost, testAgentHost } from "./agent-host.js";

let roots: string[] = [];
const server = new ArtifactServer();
let key: ReleaseKeyPair;
beforeAll(async () => {
  await server.start();
  key = await newKey();
});
afterAll(() => server.stop());
afterEach(async () => {
  await Promise.all(roots.map((root) => rm(root, { recursive: true, force: true })));
  roots = [];
});

const onOne: AgentState = {
  nodeId: "n1",
  version: "1.0.0",
  previousVersion: "",
  confirmedSequence: "1",
  handled: {},
  sequences: { "1.0.0": "1" },
};

/** A host on 1.0.0 that is busy ("the update lock is held") and negotiated `negotiated`. */
async function busyAgent(negotiated: boolean | undefined): Promise<TestAgentHost> {
  const agent = await testAgentHost({ state: { ...onOne }, installed: ["1.0.0"], pins: [key.pin] });
  roots.push(agent.paths.root);
  const host: OperationHost = agent.host;
  host.deferral = () => Promise.resolve("the update lock is held");
  if (negotiated !== undefined) host.deferNegotiated = () => negotiated;
  return agent;
}

const phasesOf = (agent: TestAgentHost) => agent.reports.map((r) => OperationPhase[r.report.phase]);

describe("a busy Agent", () => {
  it("answers DEFERRED when its session negotiated defer.v1", async () => {
    const agent = await busyAgent(true);
    await deliverOperation(
      agent.host,
      upgradeOp("op-1", await makeRelease(server, key, "1.1.0", 2)),
    );
    expect(phasesOf(agent)).toEqual(["DEFERRED"]);
    expect(agent.fetched).toEqual([]);
  });

  it("refuses defer_unsupported, naming why it is busy, when its session did not negotiate defer.v1", async () => {
    const agent = await busyAgent(false);
    await deliverOperation(
      agent.host,
      upgradeOp("op-1", await makeRelease(server, key, "1.1.0", 2)),
    );
    expect(phasesOf(agent)).toEqual(["REFUSED"]);
    expect(agent.reports[0]?.report).toMatchObject({ code: "defer_unsupported", version: "1.0.0" });
    expect(agent.reports[0]?.report.message).toMatch(/the update lock is held.*defer\.v1/);
    expect(agent.fetched).toEqual([]);
    expect(await readCurrent(agent.paths)).toBe("1.0.0");
  });
});
