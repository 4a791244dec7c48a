/**
 * Fault (a disk that fills up during an upgrade): the Agent could no longer write state.json,
 * yet the upgrade went ahead: the save of the pending switch failed silently and `current`
 * moved anyway, so the supervisor had no record to revert the unwelcomed version by.
 *
 * Expected: an upgrade (or rollback) whose pending switch cannot be recorded is FAILED
 * `state_unwritable`; `current` does not move and the state in memory still names the
 * version running.
 */
import { mkdir, rm } from "node:fs/promises";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type AgentState, saveState } from "../../../agent/agent-state.js";
import { deliverOperation } from "../../../agent/core/operations.js";
import { readCurrent } from "../../../agent/install-dir.js";
import type { ReleaseKeyPair } from "../../../control/shared/release/index.js";
import { OperationPhase } from "../../../proto/gen/agentcontrol/v1/agent_control_pb.js";
import {
  ArtifactServer,
  makeRelease,
  newKey,
  rollbackOp,
  upgradeOp,
} from "../sim/release-fixture.js";
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

/**
 * A node on 1.0.0 (previous 0.9.0) whose state.json can no longer be written (its temporary
 * file's name is taken by a directory, as ENOSPC would fail it). Like the real Agent, a save of
 * a report only logs its failure; the applier's own save rejects.
 */
async function agentOnFullDisk(bytes: Map<string, Uint8Array>): Promise<TestAgentHost> {
  const state: AgentState = {
    nodeId: "n1",
    version: "1.0.0",
    previousVersion: "0.9.0",
    confirmedSequence: "0",
    handled: {},
  };
  const agent = await testAgentHost({
    state,
    installed: ["0.9.0", "1.0.0"],
    pins: [key.pin],
    bytes,
  });
  roots.push(agent.paths.root);
  await mkdir(`${agent.paths.state}.${process.pid}.tmp`);
  agent.host.persist = () => saveState(agent.paths, state).catch(() => {});
  return agent;
}

const reportsOf = (agent: TestAgentHost, opId: string) =>
  agent.reports
    .filter((r) => r.opId === opId)
    .map((r) => `${OperationPhase[r.report.phase]}${r.report.code ? ` ${r.report.code}` : ""}`);

describe("an operation whose pending switch cannot be saved", () => {
  it("is an upgrade FAILED state_unwritable that leaves current and the state on 1.0.0", async () => {
    const next = await makeRelease(server, key, "1.1.0", 11);
    const artifact = next.artifacts["linux-amd64"];
    if (artifact === undefined) throw new Error("no artifact");
    const agent = await agentOnFullDisk(new Map([[artifact.url, artifact.bytes]]));
    await deliverOperation(agent.host, upgradeOp("up", next));
    expect(reportsOf(agent, "up").at(-1)).toBe("FAILED state_unwritable");
    expect(agent.restarts).toEqual([]);
    expect(await readCurrent(agent.paths)).toBe("1.0.0");
    expect(agent.state).toMatchObject({ version: "1.0.0", previousVersion: "0.9.0" });
    expect(agent.state.switch).toBeUndefined();
  });

  it("is a rollback FAILED state_unwritable that leaves current and the state on 1.0.0", async () => {
    const agent = await agentOnFullDisk(new Map());
    await deliverOperation(agent.host, rollbackOp("rb", "0.9.0"));
    expect(reportsOf(agent, "rb").at(-1)).toBe("FAILED state_unwritable");
    expect(agent.restarts).toEqual([]);
    expect(await readCurrent(agent.paths)).toBe("1.0.0");
    expect(agent.state).toMatchObject({ version: "1.0.0", previousVersion: "0.9.0" });
    expect(agent.state.switch).toBeUndefined();
    expect(agent.state.pendingReinstate).toBeUndefined();
  });
});
