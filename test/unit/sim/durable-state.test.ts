import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  type DurableState,
  fileStateStore,
  MAX_HANDLED_OPERATIONS,
  rememberReport,
} from "../../../agent/core/durable-state.js";
import { recoverInterrupted } from "../../../agent/core/operations.js";
import { OperationPhase } from "../../../proto/gen/agentcontrol/v1/agent_control_pb.js";

function state(): DurableState {
  return {
    nodeId: "sim-00001",
    version: "1.0.0",
    previousVersion: "",
    confirmedSequence: "0",
    handled: {},
  };
}

const report = (phase: OperationPhase) => ({ phase, version: "1.1.0", code: "", message: "" });

describe("durable agent state", () => {
  it("remembers at most MAX_HANDLED_OPERATIONS operation ids, forgetting the oldest", () => {
    const s = state();
    for (let i = 0; i < MAX_HANDLED_OPERATIONS + 10; i++)
      rememberReport(s, `op-${i}`, report(OperationPhase.CONFIRMED));
    const ids = Object.keys(s.handled);
    expect(ids).toHaveLength(MAX_HANDLED_OPERATIONS);
    expect(ids[0]).toBe("op-10");
    rememberReport(s, "op-10", report(OperationPhase.FAILED));
    expect(Object.keys(s.handled)).toHaveLength(MAX_HANDLED_OPERATIONS);
  });

  it("after a simulator crash, reports an interrupted upgrade as FAILED and forgets unstarted ones", () => {
    const s = state();
    s.handled = {
      queued: report(OperationPhase.UNSPECIFIED),
      downloading: report(OperationPhase.DOWNLOADING),
      restarting: report(OperationPhase.RESTARTING),
      refused: report(OperationPhase.REFUSED),
    };
    recoverInterrupted(s);
    expect(Object.keys(s.handled).sort()).toEqual(["downloading", "refused", "restarting"]);
    expect(s.handled.downloading).toMatchObject({
      phase: OperationPhase.FAILED,
      code: "interrupted",
    });
    expect(s.handled.restarting!.phase).toBe(OperationPhase.RESTARTING);
  });

  it("round-trips through a state file and refuses a file that is not an agent state", async () => {
    const dir = await mkdtemp(join(tmpdir(), "agent-sim-store-"));
    try {
      const store = fileStateStore(join(dir, "nested"));
      expect(await store.load("sim-00001")).toBeUndefined();
      const s = { ...state(), nodeToken: "t", confirmedSequence: "18446744073709551615" };
      await store.save(s);
      expect(await store.load("sim-00001")).toEqual(s);
      expect(
        JSON.parse(await readFile(join(dir, "nested", "sim-00001.json"), "utf8")).nodeToken,
      ).toBe("t");
      await writeFile(join(dir, "nested", "sim-00002.json"), '{"nodeId":"sim-00002"}');
      await expect(store.load("sim-00002")).rejects.toThrow(/not a valid agent state/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
