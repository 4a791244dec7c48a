/**
 * The simulated agent keeps the real Agent's confirm rule (`agent/core/confirm.ts`): a confirm
 * raises the floor to exactly the sequence of the release it verified and runs, and one naming
 * another sequence is refused `confirm_mismatch` with nothing changed; C1 judges the floor from
 * the agent's record alone.
 */
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import {
  OperationPhase,
  OperationSchema,
} from "../../proto/gen/agentcontrol/v1/agent_control_pb.js";
import { type AgentHost, deliver } from "../../simulation/agent-procedures.js";
import type { Report, SimAgent } from "../../simulation/agent-script.js";
import { confirmFloorViolation } from "../../simulation/confirm-invariants.js";
import { newAgentRecord } from "../../simulation/ground-truth.js";

function agent(): SimAgent {
  return {
    script: {
      id: "n1",
      pool: "",
      labels: {},
      behaviour: "succeed",
      rollback: "reinstate",
      stepMs: 1,
      restartMs: 1,
      configCapable: false,
      onlineAt: 0,
    },
    version: "1.0.0",
    previousVersion: "",
    confirmedSequence: 1,
    boot: 0,
    session: 1,
    handled: new Map(),
    applied: new Map(),
    confirmedHistory: [1],
    sequences: new Map(),
    restarting: false,
    crashedOnce: false,
    lateReverted: false,
    pendingReinstate: undefined,
    configBroken: false,
    busy: false,
    waiting: [],
    record: newAgentRecord("1.0.0"),
  };
}

/** A host whose timers run at once and whose restarts are instant. */
function host() {
  const reports: { id: string; r: Report }[] = [];
  const h: AgentHost = {
    report: (_, id, r) => reports.push({ id, r }),
    later: (_, __, run) => run(),
    restart: (a) => {
      a.busy = false;
    },
    disconnect: () => undefined,
    hang: () => undefined,
    violations: [],
    lateAfterMs: 1000,
    now: () => 0,
  };
  return { h, reports };
}

const upgrade = (id: string, version: string, sequence: number) =>
  create(OperationSchema, {
    id,
    kind: { case: "agentUpgrade", value: { version, sequence: BigInt(sequence) } },
  });
const confirm = (id: string, version: string, sequence: number) =>
  create(OperationSchema, {
    id,
    kind: { case: "agentConfirm", value: { version, sequence: BigInt(sequence) } },
  });

describe("the simulated agent's confirm rule", () => {
  it("refuses a confirm naming another sequence than the release it verified, changing nothing", () => {
    const a = agent();
    const { h, reports } = host();
    deliver(h, a, upgrade("c/n1/upgrade", "2.0.0", 6));
    expect(a.version).toBe("2.0.0");
    deliver(h, a, confirm("x/n1/confirm", "2.0.0", 2 ** 53 - 1));
    expect(reports.at(-1)?.r).toMatchObject({
      phase: OperationPhase.FAILED,
      code: "confirm_mismatch",
    });
    expect(a.confirmedSequence).toBe(1);
    expect(a.applied.has("x/n1/confirm")).toBe(false);
    // A release at sequence 6 is still accepted afterwards, and the right confirm raises the floor to it.
    deliver(h, a, confirm("c/n1/confirm", "2.0.0", 6));
    expect(reports.at(-1)?.r.phase).toBe(OperationPhase.CONFIRMED);
    expect(a.confirmedSequence).toBe(6);
    expect(confirmFloorViolation("n1", a)).toBeUndefined();
  });

  it("confirms the release it was installed with without raising the floor", () => {
    const a = agent();
    const { h, reports } = host();
    deliver(h, a, confirm("c/n1/confirm", "1.0.0", 9));
    expect(reports.at(-1)?.r.phase).toBe(OperationPhase.CONFIRMED);
    expect(a.confirmedSequence).toBe(1);
  });

  it("C1 breaks for a floor that is no release the agent ran and was confirmed on", () => {
    const forged = agent();
    forged.confirmedSequence = 2 ** 53 - 1;
    expect(confirmFloorViolation("n1", forged)).toMatch(
      /^C1: n1's confirmed sequence .* no release it ran/,
    );
    const unconfirmed = agent();
    const { h } = host();
    deliver(h, unconfirmed, upgrade("c/n1/upgrade", "2.0.0", 6));
    unconfirmed.confirmedSequence = 6;
    expect(confirmFloorViolation("n1", unconfirmed)).toMatch(/never confirmed/);
  });
});
