/**
 * Attack (TUF's rollback attack on a fresh install): a node installed by hand at 1.5.0 has no
 * sequence floor (no `installedSequence`, confirmed sequence 0), and accepted a replayed,
 * still-valid signed 1.3.0 (sequence 3) as an *upgrade*.
 *
 * Expected: an upgrade never goes to a version that precedes the running one (SemVer), floor
 * or no floor; it is REFUSED `sequence_rollback` before anything is fetched. Going back is only
 * the AgentRollback to the previous release the node itself recorded.
 */
import { rm } from "node:fs/promises";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { AgentState } from "../../../agent/agent-state.js";
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

/** A node installed by hand at `version`: no floor of any kind. */
async function freshInstall(version: string, extra: Partial<AgentState> = {}) {
  const state: AgentState = {
    nodeId: "n1",
    version,
    previousVersion: "",
    confirmedSequence: "0",
    handled: {},
    ...extra,
  };
  const installed = [version, ...(extra.previousVersion ? [extra.previousVersion] : [])];
  const agent = await testAgentHost({ state, installed, pins: [key.pin] });
  roots.push(agent.paths.root);
  return agent;
}

const phasesOf = (agent: TestAgentHost, opId: string) =>
  agent.reports.filter((r) => r.opId === opId).map((r) => OperationPhase[r.report.phase]);

describe("an upgrade to a version older than the one running", () => {
  it.each([
    ["1.5.0", "1.3.0", 3],
    ["1.5.0", "1.4.9", 50],
    ["2.0.0", "2.0.0-rc.1", 9],
  ])(
    "is refused on a fresh install at %s: signed %s (sequence %i)",
    async (running, older, seq) => {
      const agent = await freshInstall(running);
      const old = await makeRelease(server, key, older, seq);
      await deliverOperation(agent.host, upgradeOp("down", old));
      expect(phasesOf(agent, "down")).toEqual(["REFUSED"]);
      expect(agent.reports[0]?.report).toMatchObject({
        code: "sequence_rollback",
        version: running,
      });
      expect(agent.reports[0]?.report.message).toContain(`older than ${running}`);
      expect(agent.fetched).toEqual([]);
      expect(await readCurrent(agent.paths)).toBe(running);
    },
  );

  it("leaves a newer version (any sequence) to the other checks", async () => {
    const agent = await freshInstall("1.5.0");
    const next = await makeRelease(server, key, "1.6.0", 1);
    await deliverOperation(agent.host, upgradeOp("up", next));
    // Accepted: it gets as far as the download (which this host does not serve).
    expect(phasesOf(agent, "up")).toEqual(["ACCEPTED", "DOWNLOADING", "FAILED"]);
  });

  it("leaves going back to the AgentRollback to the recorded previous release", async () => {
    const agent = await freshInstall("1.5.0", { previousVersion: "1.4.0" });
    await deliverOperation(agent.host, rollbackOp("rb", "1.4.0"));
    expect(phasesOf(agent, "rb")).toEqual(["ACCEPTED", "RESTARTING"]);
    expect(await readCurrent(agent.paths)).toBe("1.4.0");
  });
});
