/**
 * Attack (TUF's rollback attack): a node on unconfirmed 1.5.0 (sequence 5) accepted a signed
 * 1.3.0 (sequence 3) as an upgrade, because the only floor was the confirmed sequence.
 *
 * Expected: an upgrade never goes below the highest sequence the node has installed,
 * recorded durably in the install directory (state.json) and kept across restarts; going
 * back is only the AgentRollback to the recorded previous release.
 */
import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type AgentState, loadState } from "../../../agent/agent-state.js";
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

function onUnconfirmed(extra: Partial<AgentState> = {}): AgentState {
  return {
    nodeId: "n1",
    version: "1.5.0",
    previousVersion: "1.4.0",
    confirmedSequence: "0",
    handled: {},
    sequences: { "1.4.0": "4", "1.5.0": "5" },
    installedSequence: "5",
    ...extra,
  };
}

async function agentOn(state: AgentState, bytes = new Map<string, Uint8Array>()) {
  const agent = await testAgentHost({
    state,
    installed: ["1.4.0", "1.5.0"],
    pins: [key.pin],
    bytes,
  });
  roots.push(agent.paths.root);
  return agent;
}

const phasesOf = (agent: TestAgentHost, opId: string) =>
  agent.reports.filter((r) => r.opId === opId).map((r) => OperationPhase[r.report.phase]);

describe("an upgrade below the highest sequence the node has installed", () => {
  it("is refused sequence_rollback on unconfirmed 1.5.0 (sequence 5): signed 1.3.0 (sequence 3)", async () => {
    const agent = await agentOn(onUnconfirmed());
    const old = await makeRelease(server, key, "1.3.0", 3);
    await deliverOperation(agent.host, upgradeOp("down", old));
    expect(phasesOf(agent, "down")).toEqual(["REFUSED"]);
    expect(agent.reports[0]?.report).toMatchObject({ code: "sequence_rollback", version: "1.5.0" });
    expect(agent.reports[0]?.report.message).toMatch(/below .*5.* installed/);
    expect(agent.fetched).toEqual([]);
    expect(await readCurrent(agent.paths)).toBe("1.5.0");
    expect(existsSync(join(agent.paths.versions, "1.3.0"))).toBe(false);
  });

  it("is refused after a restart, and on an install whose state predates the record (from its sequences)", async () => {
    const legacy = onUnconfirmed();
    delete legacy.installedSequence;
    const first = await agentOn(legacy);
    const reloaded = await loadState(first.paths);
    if (reloaded === undefined) throw new Error("no state");
    expect(reloaded.installedSequence).toBe("5");
    const old = await makeRelease(server, key, "1.3.0", 3);
    const agent = await agentOn(reloaded);
    await deliverOperation(agent.host, upgradeOp("down", old));
    expect(phasesOf(agent, "down")).toEqual(["REFUSED"]);
    expect(agent.reports[0]?.report.code).toBe("sequence_rollback");
  });

  it("records the sequence of every upgrade it installs in state.json", async () => {
    const start = onUnconfirmed({ version: "1.4.0", previousVersion: "", installedSequence: "4" });
    const next = await makeRelease(server, key, "1.6.0", 6);
    const bytes = next.artifacts["linux-amd64"];
    if (bytes === undefined) throw new Error("no artifact");
    const agent = await agentOn(start, new Map([[bytes.url, bytes.bytes]]));
    await deliverOperation(agent.host, upgradeOp("up", next));
    expect(phasesOf(agent, "up")).toContain("RESTARTING");
    expect((await loadState(agent.paths))?.installedSequence).toBe("6");
  });

  it("still accepts the same sequence again (a retried release) and a higher one", async () => {
    const agent = await agentOn(onUnconfirmed({ version: "1.4.0", previousVersion: "" }));
    const same = await makeRelease(server, key, "1.5.0", 5);
    await deliverOperation(agent.host, upgradeOp("retry", same));
    // Accepted: it gets as far as the download (which this host does not serve).
    expect(agent.fetched).toHaveLength(1);
    expect(phasesOf(agent, "retry")).toEqual(["ACCEPTED", "DOWNLOADING", "FAILED"]);
  });

  it("leaves going back to the AgentRollback to the recorded previous release", async () => {
    const agent = await agentOn(onUnconfirmed());
    await deliverOperation(agent.host, rollbackOp("rb", "1.4.0"));
    expect(phasesOf(agent, "rb")).toEqual(["ACCEPTED", "RESTARTING"]);
    expect(await readCurrent(agent.paths)).toBe("1.4.0");
    expect((await loadState(agent.paths))?.installedSequence).toBe("5");
  });
});
