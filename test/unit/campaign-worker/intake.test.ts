import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../../../control/agents/events.js";
import type { ConfigFailureWrite, ReportWrite } from "../../../control/campaign-store/index.js";
import {
  campaignOfOperation,
  EventIntake,
  phaseName,
} from "../../../control/campaign-worker/intake.js";
import { createLogger } from "../../../control/log.js";
import {
  ObservedStateSchema,
  OperationPhase,
} from "../../../proto/gen/agentcontrol/v1/agent_control_pb.js";

function fakeStore(fail = false) {
  const calls: { reports: readonly ReportWrite[]; failures: readonly ConfigFailureWrite[] }[] = [];
  return {
    calls,
    recordFacts: async (
      reports: readonly ReportWrite[],
      failures: readonly ConfigFailureWrite[],
    ) => {
      calls.push({ reports, failures });
      if (fail) throw new Error("database down");
    },
  };
}

function intake(db: ReturnType<typeof fakeStore>, campaignOfNode = new Map<string, string>()) {
  const touched: string[] = [];
  const connected: string[] = [];
  const it = new EventIntake({
    store: db,
    log: createLogger({ level: "silent" }),
    campaignOfNode: (n) => campaignOfNode.get(n),
    bootIdOf: () => "boot-2",
    touched: (c) => touched.push(c),
    connected: (n) => connected.push(n),
  });
  return { it, touched, connected };
}

const observed = (nodeId: string, operationId: string, phase: OperationPhase): AgentEvent => ({
  kind: "observed",
  nodeId,
  observed: create(ObservedStateSchema, { operationId, phase, version: "2.0.0" }),
  at: new Date(1000),
});

describe("operation ids in agent reports", () => {
  it.each([
    ["c1/n1/upgrade", "n1", "c1"],
    ["c1/n1/rollback", "n1", "c1"],
    ["c1/n1/confirm", "n1", "c1"],
    ["c1/n2/upgrade", "n1", undefined],
    ["c1/n1/explode", "n1", undefined],
    ["c1/n1", "n1", undefined],
    ["/n1/upgrade", "n1", undefined],
    ["c1/n1/upgrade/extra", "n1", undefined],
  ])("reads %s reported by %s as campaign %s", (op, node, campaign) => {
    expect(campaignOfOperation(op, node)).toBe(campaign);
  });

  it("names every known phase and nothing else", () => {
    expect(phaseName(OperationPhase.RESTARTING)).toBe("RESTARTING");
    expect(phaseName(OperationPhase.UNSPECIFIED)).toBeUndefined();
    expect(phaseName(99 as OperationPhase)).toBeUndefined();
  });
});

describe("the event intake", () => {
  it("ignores reports on other nodes' operations and unknown phases without writing", async () => {
    const db = fakeStore();
    const { it: intakeOf, touched } = intake(db);
    intakeOf.handle(observed("n1", "c1/n2/upgrade", OperationPhase.FAILED));
    intakeOf.handle(observed("n1", "garbage", OperationPhase.FAILED));
    intakeOf.handle(observed("n1", "c1/n1/upgrade", OperationPhase.UNSPECIFIED));
    await intakeOf.flush();
    expect(touched).toEqual([]);
    expect(db.calls).toEqual([]);
  });

  it("keeps the latest report per operation and writes them in one write", async () => {
    const db = fakeStore();
    const { it: intakeOf, touched } = intake(db);
    intakeOf.handle(observed("n1", "c1/n1/upgrade", OperationPhase.DOWNLOADING));
    intakeOf.handle(observed("n1", "c1/n1/upgrade", OperationPhase.RESTARTING));
    intakeOf.handle(observed("n2", "c1/n2/upgrade", OperationPhase.REFUSED));
    await intakeOf.flush();
    expect(touched).toEqual(["c1", "c1", "c1"]);
    expect(db.calls).toHaveLength(1);
    expect(db.calls[0]?.reports.map((r) => [r.id, r.nodeId, r.phase])).toEqual([
      ["c1/n1/upgrade", "n1", "RESTARTING"],
      ["c1/n2/upgrade", "n2", "REFUSED"],
    ]);
  });

  it("records failed config statuses of nodes in a live campaign only, with the session's boot id", async () => {
    const db = fakeStore();
    const { it: intakeOf, touched } = intake(db, new Map([["n1", "c1"]]));
    const status = (nodeId: string, ok: boolean): AgentEvent => ({
      kind: "config_status",
      nodeId,
      ok,
      message: "bad config",
      at: new Date(5),
    });
    intakeOf.handle(status("n1", true));
    intakeOf.handle(status("n9", false));
    intakeOf.handle(status("n1", false));
    await intakeOf.flush();
    expect(touched).toEqual(["c1"]);
    expect(db.calls[0]?.failures.map((f) => [f.campaignId, f.nodeId, f.at, f.bootId])).toEqual([
      ["c1", "n1", new Date(5), "boot-2"],
    ]);
  });

  it("keeps what it could not write for the next flush", async () => {
    const failing = fakeStore(true);
    const { it: intakeOf } = intake(failing);
    intakeOf.handle(observed("n1", "c1/n1/upgrade", OperationPhase.FAILED));
    await expect(intakeOf.flush()).rejects.toThrow(/database down/);
    await expect(intakeOf.flush()).rejects.toThrow(/database down/);
    expect(failing.calls.map((c) => c.reports.map((r) => r.id))).toEqual([
      ["c1/n1/upgrade"],
      ["c1/n1/upgrade"],
    ]);
  });

  it("reports reconnects so the worker re-sends", () => {
    const { it: intakeOf, connected, touched } = intake(fakeStore(), new Map([["n1", "c1"]]));
    intakeOf.handle({ kind: "connected", node: { nodeId: "n1" } as never });
    intakeOf.handle({ kind: "disconnected", nodeId: "n1", sessionId: "s", reason: "" });
    expect(connected).toEqual(["n1"]);
    expect(touched).toEqual(["c1", "c1"]);
  });
});
