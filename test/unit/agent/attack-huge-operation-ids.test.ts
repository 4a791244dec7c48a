/**
 * Attack: a hostile Control sent operations whose ids were a MiB each; the Agent kept every id
 * verbatim in state.json (`handled`, up to 256 of them: 40 ids made a 42 MB state) and in its
 * logs.
 *
 * Expected: an operation id is at most 256 characters (Control's own ids are far shorter, and
 * it refuses a report id over 256). A longer one is refused: not queued, not remembered, not
 * answered, with one short log line.
 */
import { rm, stat } from "node:fs/promises";
import { create } from "@bufbuild/protobuf";
import { afterEach, describe, expect, it } from "vitest";
import type { AgentState } from "../../../agent/agent-state.js";
import { deliverOperation, MAX_OPERATION_ID_CHARS } from "../../../agent/core/operations.js";
import { OperationSchema } from "../../../proto/gen/agentcontrol/v1/agent_control_pb.js";
import { testAgentHost } from "./agent-host.js";

let roots: string[] = [];
afterEach(async () => {
  await Promise.all(roots.map((root) => rm(root, { recursive: true, force: true })));
  roots = [];
});

async function agentOn() {
  const state: AgentState = {
    nodeId: "n1",
    version: "1.0.0",
    previousVersion: "",
    confirmedSequence: "0",
    handled: {},
  };
  const agent = await testAgentHost({ state, installed: ["1.0.0"], pins: [] });
  roots.push(agent.paths.root);
  return agent;
}

/** A confirm of a version the node does not run (answered FAILED at once). */
const confirmWithId = (id: string) =>
  create(OperationSchema, {
    id,
    kind: { case: "agentConfirm", value: { version: "9.9.9", sequence: 1n } },
  });

describe("an operation id longer than 256 characters", () => {
  it("is refused with one short log line, and kept neither in state.json nor in memory", async () => {
    const agent = await agentOn();
    for (let i = 0; i < 8; i++) {
      await deliverOperation(agent.host, confirmWithId(`${i}-${"x".repeat(1024 * 1024)}`));
    }
    expect(agent.reports).toEqual([]);
    expect(Object.keys(agent.state.handled)).toEqual([]);
    expect((await stat(agent.paths.state)).size).toBeLessThan(4096);
    const lines = agent.log.lines.filter((l) => /operation id/.test(l.msg));
    expect(lines).toHaveLength(8);
    for (const line of agent.log.lines) expect(JSON.stringify(line).length).toBeLessThan(1024);
  });

  it("is answered as usual at exactly 256 characters", async () => {
    const agent = await agentOn();
    const id = "y".repeat(MAX_OPERATION_ID_CHARS);
    await deliverOperation(agent.host, confirmWithId(id));
    expect(agent.reports.map((r) => r.opId)).toEqual([id]);
  });
});
