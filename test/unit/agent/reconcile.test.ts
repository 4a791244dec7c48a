import { describe, expect, it } from "vitest";
import type { AgentState, PendingSwitch } from "../../../agent/agent-state.js";
import { reconcile } from "../../../agent/reconcile.js";
import { OperationPhase } from "../../../proto/gen/agentcontrol/v1/agent_control_pb.js";

const upgrade: PendingSwitch = {
  kind: "upgrade",
  opId: "up",
  from: "1.0.0",
  to: "2.0.0",
  previousBefore: "0.9.0",
};
const rollback: PendingSwitch = {
  kind: "rollback",
  opId: "rb",
  from: "2.0.0",
  to: "1.0.0",
  previousBefore: "1.0.0",
};

function state(pending: PendingSwitch | undefined, version: string, previous: string): AgentState {
  return {
    nodeId: "n",
    version,
    previousVersion: previous,
    confirmedSequence: "1",
    handled: {
      [pending?.opId ?? "x"]: { phase: OperationPhase.APPLYING, version, code: "", message: "" },
    },
    ...(pending ? { switch: pending } : {}),
  };
}

describe("reconciling the durable state with the current link after a stop at any moment", () => {
  it("keeps an upgrade whose link moved on trial", () => {
    const s = state(upgrade, "2.0.0", "1.0.0");
    expect(reconcile(s, "2.0.0")).toEqual({ changed: false, trial: upgrade });
    expect(s.switch).toEqual(upgrade);
  });

  it("undoes an upgrade stopped before its link moved, reporting it interrupted", () => {
    const s = state(upgrade, "2.0.0", "1.0.0");
    expect(reconcile(s, "1.0.0")).toEqual({ changed: true, trial: undefined });
    expect(s).toMatchObject({ version: "1.0.0", previousVersion: "0.9.0", pendingReport: "up" });
    expect(s.switch).toBeUndefined();
    expect(s.handled.up).toMatchObject({ phase: OperationPhase.FAILED, code: "interrupted" });
  });

  it("settles a rollback whose link moved", () => {
    const s = state(rollback, "1.0.0", "2.0.0");
    s.pendingReinstate = "rb";
    expect(reconcile(s, "1.0.0")).toEqual({ changed: true, trial: undefined });
    expect(s.switch).toBeUndefined();
    expect(s.pendingReinstate).toBe("rb");
  });

  it("undoes a rollback stopped before its link moved: no REINSTATED is reported", () => {
    const s = state(rollback, "1.0.0", "2.0.0");
    s.pendingReinstate = "rb";
    reconcile(s, "2.0.0");
    expect(s).toMatchObject({ version: "2.0.0", previousVersion: "1.0.0", pendingReport: "rb" });
    expect(s.pendingReinstate).toBeUndefined();
    expect(s.handled.rb).toMatchObject({ phase: OperationPhase.FAILED, code: "interrupted" });
  });

  it("takes the link's version when the state names another one", () => {
    const s = state(undefined, "1.0.0", "");
    expect(reconcile(s, "1.1.0")).toEqual({ changed: true, trial: undefined });
    expect(s.version).toBe("1.1.0");
  });
});
