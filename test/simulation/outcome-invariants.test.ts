/**
 * The outcome invariants (O1–O5, the ground-truth I2) on hand-built worlds: each breaks when
 * Control's claim contradicts what the agents' record says, and holds when it does not.
 */
import { describe, expect, it } from "vitest";
import { type CampaignState, CONVERGENCE_CREATOR } from "../../control/campaign/index.js";
import { MemoryFleetStore } from "../../control/campaign-store/index.js";
import type { SimAgent } from "../../simulation/agent-script.js";
import type { WireOperation } from "../../simulation/ground-truth.js";
import { healthViolations } from "../../simulation/health-invariants.js";
import { outcomeEndViolations, outcomeViolations } from "../../simulation/outcome-invariants.js";
import { newOutcomeCheckState, type OutcomeWorld } from "../../simulation/outcome-world.js";
import { NEW, OLD, oneBatchCampaign } from "./hand-built-world.js";
import { testAgent } from "./test-agent.js";

function op(
  a: SimAgent,
  campaignId: string,
  kind: WireOperation["kind"],
  at: number,
): WireOperation {
  return {
    id: `${campaignId}/${a.script.id}/${kind}`,
    campaignId,
    kind,
    version: kind === "rollback" ? OLD : NEW,
    sequence: 2,
    at,
    agentVersion: a.version,
    agentConfirmed: a.confirmedSequence,
  };
}

/** The agent takes the upgrade at `at` and comes back on NEW with a new boot 10 ms later. */
function upgrade(a: SimAgent, campaignId: string, at: number): void {
  a.record.sent.push(op(a, campaignId, "upgrade", at));
  a.record.received.push(op(a, campaignId, "upgrade", at + 5));
  a.version = NEW;
  a.record.runs.push({ version: NEW, at: at + 6 });
  a.boot++;
  a.record.connects.push({ at: at + 10, boot: a.boot, version: NEW });
}

/** The agent is rolled back to OLD at `at`. */
function rollBack(a: SimAgent, campaignId: string, at: number): void {
  a.record.sent.push(op(a, campaignId, "rollback", at));
  a.record.received.push(op(a, campaignId, "rollback", at + 5));
  a.version = OLD;
  a.record.runs.push({ version: OLD, at: at + 6 });
}

/** The agent reverts to OLD by itself at `at` and reconnects on it with a new boot 10 ms later. */
function revertBySelf(a: SimAgent, at: number): void {
  a.version = OLD;
  a.record.runs.push({ version: OLD, at });
  a.boot++;
  a.record.connects.push({ at: at + 10, boot: a.boot, version: OLD });
}

/** A world of `agents` and one campaign `c0` over them in one batch (threshold 0 %). */
function world(agents: SimAgent[], createdBy = "operator") {
  const { store, campaign, fleet, set } = oneBatchCampaign(
    agents,
    { failureThresholdPercent: 0 },
    createdBy,
  );
  const fleetStore = new MemoryFleetStore(store);
  const disabledAt = new Map<string, number>();
  const w: OutcomeWorld = { store, fleetStore, fleet, disabledAt, state: newOutcomeCheckState() };
  return { w, set, campaign, disabledAt, fleetStore };
}

const rolledBack = (c: CampaignState): Partial<CampaignState> => ({
  phase: "rolled_back",
  rollbackCause: "breach",
  code: "batch_failed",
  batches: c.batches.map((b) => ({ ...b, state: "rolled_back", startedAt: 0, endedAt: 100 })),
});

describe("O1: a rolled-back campaign's nodes run their previous version", () => {
  it("breaks when a node of the breached batch still runs the target", () => {
    const a = testAgent("n1", { connected: true });
    const { w, set, campaign } = world([a]);
    upgrade(a, "c0", 10);
    set(rolledBack(campaign), { state: "failed", code: "reconnect_timeout" });
    expect(outcomeViolations(w, 100).join("\n")).toMatch(
      /^O1: c0 says rolled_back but n1 .* runs 2\.0\.0, not its previous 1\.0\.0$/m,
    );
  });

  it("holds when every such node is back on its previous version", () => {
    const a = testAgent("n1", { connected: true });
    const { w, set, campaign } = world([a]);
    upgrade(a, "c0", 10);
    rollBack(a, "c0", 50);
    set(rolledBack(campaign), { state: "rolled_back" });
    expect(outcomeViolations(w, 100)).toEqual([]);
    expect(outcomeEndViolations(w, 100)).toEqual([]);
  });

  it("a failed rollback must name the node that is not back", () => {
    const a = testAgent("n1", { connected: true });
    const { w, set, campaign } = world([a]);
    upgrade(a, "c0", 10);
    set(
      { ...rolledBack(campaign), phase: "failed", code: "rollback_unconfirmed", message: "" },
      { state: "failed", code: "reconnect_timeout" },
    );
    expect(outcomeViolations(w, 100).join("\n")).toMatch(
      /^O1: c0 says failed\/rollback_unconfirmed without naming n1/m,
    );
    const named = world([a]);
    named.set(
      { ...rolledBack(named.campaign), phase: "failed", code: "rollback_failed" },
      { state: "rollback_failed", code: "rollback_unconfirmed" },
    );
    expect(outcomeViolations(named.w, 100).filter((v) => v.startsWith("O1"))).toEqual([]);
  });
});

describe("I2 from ground truth: a finished rollback reached every node that ran the target", () => {
  it("breaks when a node ran the target and was neither sent a rollback nor named", () => {
    const a = testAgent("n1", { connected: true });
    const { w, set, campaign } = world([a]);
    upgrade(a, "c0", 10);
    set({ ...rolledBack(campaign), finishedAt: 100 }, { state: "timed_out" });
    expect(outcomeViolations(w, 100).join("\n")).toMatch(
      /^I2: n1 ran 2\.0\.0 after c0's upgrade and was neither sent a rollback/m,
    );
  });

  it("holds for a node seen back on its previous release by itself before the rollback began", () => {
    const a = testAgent("n1", { connected: true });
    const b = testAgent("n2", { connected: true });
    const { w, set, campaign } = world([a, b]);
    upgrade(a, "c0", 10);
    upgrade(b, "c0", 10);
    revertBySelf(a, 40);
    rollBack(b, "c0", 60);
    set({ ...rolledBack(campaign), finishedAt: 100 }, { state: "failed", code: "reverted" });
    expect(outcomeViolations(w, 100).filter((v) => v.startsWith("I2"))).toEqual([]);
  });

  it("breaks for a node that reverted only after the rollback began, unsent and unnamed", () => {
    const a = testAgent("n1", { connected: true });
    const b = testAgent("n2", { connected: true });
    const { w, set, campaign } = world([a, b]);
    upgrade(a, "c0", 10);
    upgrade(b, "c0", 10);
    rollBack(b, "c0", 30);
    revertBySelf(a, 40);
    set({ ...rolledBack(campaign), finishedAt: 100 }, { state: "failed", code: "reverted" });
    expect(outcomeViolations(w, 100).join("\n")).toMatch(
      /^I2: n1 ran 2\.0\.0 after c0's upgrade and was neither sent a rollback/m,
    );
  });
});

describe("health checks from ground truth: I2 and H1", () => {
  /** The agent boots on the target, fails its health checks and its supervisor reverts it. */
  function failHealth(a: SimAgent, at: number): void {
    upgrade(a, "c0", at);
    a.version = OLD;
    a.record.runs.push({ version: OLD, at: at + 8 });
    (a.record.healthFailures as string[]).push("c0/n1/upgrade");
  }

  it("I2 asks no rollback of a node its own supervisor took off the target, but still of one on it", () => {
    const a = testAgent("n1", { connected: true });
    const { w, set, campaign } = world([a]);
    failHealth(a, 10);
    set(
      { ...rolledBack(campaign), finishedAt: 100 },
      { state: "failed", code: "health_check_failed" },
    );
    expect(outcomeViolations(w, 100).filter((v) => v.startsWith("I2"))).toEqual([]);
    // Back on the target afterwards: the exemption no longer holds.
    a.version = NEW;
    a.record.runs.push({ version: NEW, at: 90 });
    const again = world([a]);
    again.set(
      { ...rolledBack(again.campaign), finishedAt: 100 },
      { state: "failed", code: "health_check_failed" },
    );
    expect(outcomeViolations(again.w, 100).join("\n")).toMatch(
      /^I2: n1 ran 2\.0\.0 after c0's upgrade/m,
    );
  });

  it("H1 breaks when a node that failed the target's health checks is succeeded, and holds when it failed", () => {
    const a = testAgent("n1", { connected: true });
    const { w, set } = world([a]);
    failHealth(a, 10);
    set({}, { state: "succeeded" });
    expect(healthViolations(w.store, w.fleet, 100)).toEqual([
      "H1: n1 failed the health checks of c0's upgrade, yet the campaign says it succeeded",
    ]);
    set({}, { state: "failed", code: "health_check_failed" });
    expect(healthViolations(w.store, w.fleet, 100)).toEqual([]);
  });
});

describe("O2: a completed campaign had no batch past its threshold of true failures", () => {
  const completed = (c: CampaignState): Partial<CampaignState> => ({
    phase: "completed",
    finishedAt: 100,
    batches: c.batches.map((b) => ({ ...b, state: "passed", startedAt: 0, endedAt: 100 })),
  });

  it("breaks when a node the upgrade reached never came back on the target", () => {
    const a = testAgent("n1", { connected: true });
    const b = testAgent("n2", { connected: true });
    const { w, set, campaign } = world([a, b]);
    upgrade(a, "c0", 10);
    b.record.received.push(op(b, "c0", "upgrade", 15)); // it never returns
    set(completed(campaign), { state: "succeeded" });
    expect(outcomeViolations(w, 100).join("\n")).toMatch(
      /^O2: c0 says completed but batch 1 had 1 true failures of 2 offered \(threshold 0 %\): n2$/m,
    );
  });

  it("breaks when a node came back on the target, then reverted by itself before the batch passed", () => {
    const a = testAgent("n1", { connected: true });
    const b = testAgent("n2", { connected: true });
    const { w, set, campaign } = world([a, b]);
    upgrade(a, "c0", 10);
    upgrade(b, "c0", 20);
    revertBySelf(b, 60);
    set(completed(campaign), { state: "succeeded" });
    expect(outcomeViolations(w, 100).join("\n")).toMatch(
      /^O2: c0 says completed but batch 1 had 1 true failures of 2 offered \(threshold 0 %\): n2$/m,
    );
  });

  it("holds when every node came back on the target with a new boot before the batch passed", () => {
    const a = testAgent("n1", { connected: true });
    const b = testAgent("n2", { connected: true });
    const { w, set, campaign } = world([a, b]);
    upgrade(a, "c0", 10);
    upgrade(b, "c0", 20);
    set(completed(campaign), { state: "succeeded" });
    expect(outcomeViolations(w, 100)).toEqual([]);
  });

  it("a node that came back only after the batch passed is a failure", () => {
    const a = testAgent("n1", { connected: true });
    const { w, set, campaign } = world([a]);
    upgrade(a, "c0", 95);
    set(completed(campaign), { state: "succeeded" });
    expect(outcomeViolations(w, 100).join("\n")).toMatch(/^O2: /m);
  });
});

describe("O3, O4 and O5: what an agent may be sent and run", () => {
  it("O3: an agent running a version no campaign sent it", () => {
    const a = testAgent("n1", { connected: true });
    const { w } = world([a]);
    a.version = "3.0.0";
    a.record.runs.push({ version: "3.0.0", at: 5 });
    expect(outcomeViolations(w, 10)).toEqual(["O3: n1 runs 3.0.0, which no campaign sent it"]);
  });

  it("O3: an upgrade that names no campaign holding the node, or another target", () => {
    const a = testAgent("n1", { connected: true });
    const { w } = world([a]);
    a.record.sent.push({ ...op(a, "c9", "upgrade", 5) });
    a.record.sent.push({ ...op(a, "c0", "upgrade", 6), version: "4.0.0" });
    expect(outcomeViolations(w, 10)).toEqual([
      "O3: n1 was sent c9/n1/upgrade (2.0.0) by no campaign that selected it",
      "O3: n1 was sent 4.0.0 by c0, whose target is 2.0.0",
    ]);
  });

  it("O4: a new offer after the node was disabled breaks; one sent before holds", () => {
    const a = testAgent("n1", { connected: true });
    const { w, disabledAt } = world([a]);
    disabledAt.set("n1", 100);
    a.record.sent.push(op(a, "c0", "upgrade", 50));
    a.record.sent.push(op(a, "c0", "upgrade", 150)); // a re-send of the same offer
    expect(outcomeViolations(w, 200)).toEqual([]);
    const b = testAgent("n2", { connected: true });
    const late = world([b]);
    late.disabledAt.set("n2", 100);
    b.record.sent.push(op(b, "c0", "upgrade", 100));
    expect(outcomeViolations(late.w, 200)).toEqual([
      "O4: n2 was offered c0/n2/upgrade at 100, after it was disabled at 100",
    ]);
  });

  it("O4: an offer after the campaign was seen aborted", () => {
    const a = testAgent("n1", { connected: true });
    const { w, set } = world([a]);
    set({ phase: "aborted", code: "aborted" });
    expect(outcomeViolations(w, 100)).toEqual([]);
    a.record.sent.push(op(a, "c0", "upgrade", 120));
    expect(outcomeViolations(w, 120)).toEqual([
      "O4: c0 offered n1 at 120, after it was aborted at 100",
    ]);
  });

  it("O4: a convergence offer after its desired version was halted", () => {
    const a = testAgent("n1", { connected: true });
    const { w, fleetStore } = world([a], `${CONVERGENCE_CREATOR}d1`);
    fleetStore.tables.desired.set("d1", {
      id: "d1",
      selector: { labels: {}, pools: [], nodeIds: [] },
      exclude: { nodeIds: [], tags: {} },
      target: { version: NEW, sequence: 2 },
      setAt: 0,
      setBy: "operator",
      settings: {
        reconnectTimeoutMs: 1,
        configGraceMs: 0,
        disruptionBudgetPercent: 100,
        maxFailures: 1,
      },
      haltedAt: 100,
      haltedReason: "a burst of failures",
    });
    a.record.sent.push(op(a, "c0", "upgrade", 130));
    expect(outcomeViolations(w, 130)).toEqual([
      "O4: convergence c0 offered n1 at 130, after d1 was halted at 100",
    ]);
  });

  it("O5: convergence sends an agent at or below its confirmed sequence, or below its version", () => {
    const a = testAgent("n1", { connected: true });
    const { w } = world([a], `${CONVERGENCE_CREATOR}d1`);
    a.record.sent.push({ ...op(a, "c0", "upgrade", 10), agentConfirmed: 2 });
    a.record.sent.push({ ...op(a, "c0", "upgrade", 11), agentVersion: "9.0.0", agentConfirmed: 0 });
    expect(outcomeViolations(w, 20)).toEqual([
      "O5: convergence c0 sent n1 sequence 2, at or below the 2 it confirmed",
      "O5: convergence c0 sent n1 2.0.0, below the 9.0.0 it runs",
    ]);
  });
});
