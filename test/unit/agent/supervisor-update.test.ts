/**
 * The pure decisions of a supervisor update (agent/core/supervisor-update.ts): what the
 * running supervisor does with the install directory it finds (the pointer to the
 * supervisor in use, the supervisor's own record, the Agent's switch in progress), what a
 * failed trial reports, and which installed supervisors may be deleted.
 */
import { describe, expect, it } from "vitest";
import {
  failedRecord,
  nextSupervisorStep,
  SUPERVISOR_FAILED,
  type SupervisorRecord,
  type SupervisorView,
  settledRecord,
  supervisorsToRemove,
  supervisorTrialFailure,
} from "../../../agent/core/supervisor-update.js";

const upgradeOn = (supervisor: boolean) => ({
  kind: "upgrade" as const,
  opId: "op-2",
  from: "1.0.0",
  to: "2.0.0",
  ...(supervisor ? { supervisor: true } : {}),
});

function view(over: Partial<SupervisorView>): SupervisorView {
  return { inUse: "", record: {}, current: "1.0.0", pending: undefined, ...over };
}

describe("what the running supervisor does with the install directory it finds", () => {
  it("just runs the Agent when no switch and no trial are recorded", () => {
    expect(nextSupervisorStep(view({}))).toEqual({ kind: "run" });
  });

  it("runs the Agent on trial itself when the upgrade's release carries no supervisor", () => {
    expect(nextSupervisorStep(view({ current: "2.0.0", pending: upgradeOn(false) }))).toEqual({
      kind: "run",
    });
  });

  it("starts the release's supervisor on trial for an upgrade on trial whose signed release carries one", () => {
    expect(
      nextSupervisorStep(view({ inUse: "1.0.0", current: "2.0.0", pending: upgradeOn(true) })),
    ).toEqual({
      kind: "trial",
      trial: { version: "2.0.0", opId: "op-2", from: "1.0.0" },
      revertsAgent: true,
    });
  });

  it("names the supervisor installed by hand as the one to fall back to when no pointer exists", () => {
    const step = nextSupervisorStep(view({ current: "2.0.0", pending: upgradeOn(true) }));
    expect(step).toMatchObject({ kind: "trial", trial: { from: "" } });
  });

  it("does not start a trial for a switch whose link has not moved (the supervisor reconciles it first)", () => {
    expect(nextSupervisorStep(view({ current: "1.0.0", pending: upgradeOn(true) }))).toEqual({
      kind: "run",
    });
  });

  it("does not try a rollback's version as a supervisor", () => {
    const rollback = { kind: "rollback" as const, opId: "rb", from: "2.0.0", to: "1.0.0" };
    expect(
      nextSupervisorStep(view({ current: "1.0.0", pending: { ...rollback, supervisor: true } })),
    ).toEqual({ kind: "run" });
  });

  it("runs the Agent when the supervisor in use already is the release's", () => {
    expect(
      nextSupervisorStep(view({ inUse: "2.0.0", current: "2.0.0", pending: upgradeOn(true) })),
    ).toEqual({ kind: "run" });
  });

  it("settles a trial whose pointer already moved (killed between the move and the record)", () => {
    const trial = { version: "2.0.0", opId: "op-2", from: "1.0.0" };
    expect(
      nextSupervisorStep(view({ inUse: "2.0.0", current: "2.0.0", record: { trial } })),
    ).toEqual({ kind: "settle", trial });
  });

  it("tries again, without reverting the Agent, a trial whose Agent was already welcomed when the supervisor died", () => {
    const trial = { version: "2.0.0", opId: "op-2", from: "1.0.0" };
    expect(
      nextSupervisorStep(view({ inUse: "1.0.0", current: "2.0.0", record: { trial } })),
    ).toEqual({ kind: "trial", trial, revertsAgent: false });
  });

  it("prefers the Agent's switch on trial over the record of the same trial (reverting is still possible)", () => {
    const trial = { version: "2.0.0", opId: "op-2", from: "1.0.0" };
    expect(
      nextSupervisorStep(
        view({ inUse: "1.0.0", current: "2.0.0", record: { trial }, pending: upgradeOn(true) }),
      ),
    ).toEqual({ kind: "trial", trial, revertsAgent: true });
  });

  it("drops a recorded trial whose Agent version no longer runs (the switch was undone)", () => {
    const trial = { version: "2.0.0", opId: "op-2", from: "1.0.0" };
    expect(
      nextSupervisorStep(view({ inUse: "1.0.0", current: "1.0.0", record: { trial } })),
    ).toEqual({ kind: "drop", trial });
  });
});

describe("the supervisor's record after a trial", () => {
  const trial = { version: "2.0.0", opId: "op-2", from: "1.0.0" };

  it("keeps the supervisor the pointer named before as the previous one, and forgets an old failure", () => {
    const before: SupervisorRecord = {
      trial,
      previous: "0.9.0",
      failure: { version: "1.5.0", opId: "x", code: SUPERVISOR_FAILED, message: "m" },
    };
    expect(settledRecord(before, trial)).toEqual({ previous: "1.0.0" });
  });

  it("keeps the previous supervisor and records the failure when the trial failed", () => {
    const before: SupervisorRecord = { trial, previous: "0.9.0" };
    expect(failedRecord(before, trial, SUPERVISOR_FAILED, "it crashed")).toEqual({
      previous: "0.9.0",
      failure: { version: "2.0.0", opId: "op-2", code: SUPERVISOR_FAILED, message: "it crashed" },
    });
  });
});

describe("which installed supervisors may be deleted", () => {
  it("never the one in use, the previous one, nor one on trial", () => {
    expect(
      supervisorsToRemove(["0.8.0", "0.9.0", "1.0.0", "2.0.0", "3.0.0"], "1.0.0", {
        previous: "0.9.0",
        trial: { version: "2.0.0", opId: "op", from: "1.0.0" },
      }).sort(),
    ).toEqual(["0.8.0", "3.0.0"]);
  });

  it("nothing that is not a plain version directory name", () => {
    expect(supervisorsToRemove(["..", ".", "", "a/b", "1.0.0"], "", {})).toEqual(["1.0.0"]);
  });
});

describe("what a failed supervisor trial reports", () => {
  it("a supervisor that crashes at start: supervisor_failed, with its exit code", () => {
    expect(
      supervisorTrialFailure("2.0.0", { deadline: false, code: 3, signal: null }, 8000),
    ).toEqual({
      code: SUPERVISOR_FAILED,
      message: "the supervisor of 2.0.0 exited (code 3) before the Agent was welcomed by Control",
    });
  });

  it("a supervisor that never brings the Agent back: supervisor_failed, naming the deadline", () => {
    expect(
      supervisorTrialFailure("2.0.0", { deadline: true, code: null, signal: "SIGKILL" }, 8000),
    ).toEqual({
      code: SUPERVISOR_FAILED,
      message:
        "the supervisor of 2.0.0 did not bring the Agent back (welcomed by Control) within 8000 ms",
    });
  });

  it("a supervisor that cannot be started at all: supervisor_failed, with the reason", () => {
    expect(
      supervisorTrialFailure(
        "2.0.0",
        { deadline: false, code: null, signal: null, startError: "spawn EACCES" },
        8000,
      ),
    ).toEqual({
      code: SUPERVISOR_FAILED,
      message: "the supervisor of 2.0.0 could not be started: spawn EACCES",
    });
  });
});
