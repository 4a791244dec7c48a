/**
 * Attack: a hostile Control sent operations named `__proto__` and `constructor`; the Agent
 * looked them up in a plain object (`handled`), found Object.prototype's members, took them
 * for reports already made, and crashed sending them.
 *
 * Expected: such an id is an id like any other: handled once, answered, remembered in
 * state.json across a restart, and a redelivery answered with the same report.
 */
import { rm } from "node:fs/promises";
import { create } from "@bufbuild/protobuf";
import { afterEach, describe, expect, it } from "vitest";
import { type AgentState, loadState } from "../../../agent/agent-state.js";
import { deliverOperation } from "../../../agent/core/operations.js";
import { OperationBudget, receiveOperation } from "../../../agent/operation-queue.js";
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

describe("an operation named like an Object.prototype member", () => {
  it.each(["__proto__", "constructor", "toString", "hasOwnProperty"])(
    "is handled like any other id: %s",
    async (id) => {
      const agent = await agentOn();
      const budget = new OperationBudget({ log: agent.log });
      await receiveOperation(agent.host, budget, confirmWithId(id));
      expect(agent.reports.map((r) => [r.opId, r.report.phase > 0])).toEqual([[id, true]]);
      const first = agent.reports[0]?.report;
      expect(Object.getPrototypeOf(agent.state.handled)).toBe(Object.prototype);
      // Redelivered: answered with the same report, not applied again.
      await deliverOperation(agent.host, confirmWithId(id));
      expect(agent.reports.map((r) => r.report)).toEqual([first, first]);
      // Remembered across a restart.
      const reloaded = await loadState(agent.paths);
      expect(reloaded !== undefined && Object.hasOwn(reloaded.handled, id)).toBe(true);
      expect(reloaded?.handled[id]).toEqual(first);
    },
  );
});
