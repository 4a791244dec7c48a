import { describe, expect, it } from "vitest";
import type { CampaignEvent } from "../../../control/campaign/index.js";
import { type CommandRow, commandOf } from "../../../control/campaign-store/index.js";
import { auditRowsOf, commandOutcomes } from "../../../control/campaign-worker/audit.js";

const cmd = (id: string, kind: string, rollback = false): CommandRow => ({
  id,
  kind,
  rollback,
  reason: "why",
  actor: "alice",
  actor_ip: "10.0.0.1",
});

describe("audit rows of a decision", () => {
  it("attributes a pause and the phase change it caused to the operator", () => {
    const events: CampaignEvent[] = [
      { kind: "command_applied", command: { kind: "pause", reason: "why" } },
      { kind: "phase_changed", from: "running", to: "paused" },
    ];
    const rows = auditRowsOf("c1", events, [cmd("1", "pause")]);
    expect(rows.map((r) => `${r.action}:${r.actor}:${r.actorIp}`)).toEqual([
      "pause:alice:10.0.0.1",
      "phase:alice:10.0.0.1",
    ]);
    expect(rows[0]?.message).toMatch(/pause: why/);
  });

  it("records a skipped gate with its operator, its number from 1 and the reason; the batch's pass is the engine's", () => {
    const events: CampaignEvent[] = [
      { kind: "command_applied", command: { kind: "skip_gate", gate: 1, reason: "why" } },
      { kind: "batch_passed", batch: 0 },
    ];
    const rows = auditRowsOf("c1", events, [{ ...cmd("1", "skip_gate"), gate: 1 }]);
    expect(rows.map((r) => `${r.action}:${r.actor}`)).toEqual([
      "skip_gate:alice",
      "batch.pass:control",
    ]);
    expect(rows[0]?.message).toBe("campaign c1: skip gate 2: why");
    expect(rows[0]?.detail).toEqual({ gate: 1, reason: "why" });
  });

  it("reads a stored skip_gate command with its gate, and none without one", () => {
    expect(commandOf({ ...cmd("1", "skip_gate"), gate: 0 })).toEqual({
      kind: "skip_gate",
      gate: 0,
      reason: "why",
    });
    expect(commandOf({ ...cmd("1", "skip_gate"), gate: null })).toBeUndefined();
    expect(commandOf(cmd("1", "skip_gate"))).toBeUndefined();
  });

  it("attributes what the engine did after a resume to control", () => {
    const events: CampaignEvent[] = [
      { kind: "command_applied", command: { kind: "resume" } },
      { kind: "phase_changed", from: "paused", to: "running" },
      { kind: "batch_passed", batch: 1 },
      { kind: "phase_changed", from: "running", to: "completed" },
      { kind: "finished", phase: "completed" },
    ];
    const rows = auditRowsOf("c1", events, [cmd("1", "resume")]);
    expect(rows.map((r) => `${r.action}:${r.actor}`)).toEqual([
      "resume:alice",
      "phase:alice",
      "batch.pass:control",
      "phase:control",
      "finish:control",
    ]);
  });

  it("attributes an abort's rollback to the operator and a breach's rollback to control", () => {
    const abort = auditRowsOf(
      "c1",
      [
        { kind: "command_applied", command: { kind: "abort", rollback: true } },
        { kind: "rollback_started", batch: 0, cause: "abort" },
        { kind: "phase_changed", from: "running", to: "rolling_back" },
      ],
      [cmd("1", "abort", true)],
    );
    expect(abort.map((r) => `${r.action}:${r.actor}`)).toEqual([
      "abort:alice",
      "rollback:alice",
      "phase:alice",
    ]);
    const breach = auditRowsOf(
      "c1",
      [
        { kind: "breached", batch: 0, failed: 2, offerable: 5, stoppedByNodeId: "n3" },
        { kind: "rollback_started", batch: 0, cause: "breach" },
      ],
      [],
    );
    expect(breach.map((r) => `${r.action}:${r.actor}:${r.nodeId}`)).toEqual([
      "breach:control:n3",
      "rollback:control:undefined",
    ]);
  });

  it("records an ignored command with why, and outcomes in command order", () => {
    const events: CampaignEvent[] = [
      { kind: "command_applied", command: { kind: "pause" } },
      { kind: "command_ignored", command: { kind: "pause" }, why: "already paused" },
    ];
    const rows = auditRowsOf("c1", events, [cmd("1", "pause"), cmd("2", "pause")]);
    expect(rows[1]?.message).toMatch(/ignored: already paused/);
    expect(commandOutcomes(events, [cmd("1", "pause"), cmd("2", "pause")])).toEqual([
      { id: "1", outcome: "applied" },
      { id: "2", outcome: "ignored: already paused" },
    ]);
  });
});
