/**
 * O2 against nodes that deferred: a node that only said "not now" is neither offered nor failed,
 * but one that deferred once and then failed the re-offer without applying it (its download
 * failed, its verification refused it) is a true failure: O2 exempts only a node whose every
 * answer was DEFERRED, so an engine that counted such a node as a success is seen.
 */
import { describe, expect, it } from "vitest";
import { MemoryFleetStore } from "../../control/campaign-store/index.js";
import type { SimAgent } from "../../simulation/agent-script.js";
import type { WireOperation } from "../../simulation/ground-truth.js";
import { outcomeViolations } from "../../simulation/outcome-invariants.js";
import { newOutcomeCheckState, type OutcomeWorld } from "../../simulation/outcome-world.js";
import { completedAt100, NEW, OLD, oneBatchCampaign } from "./hand-built-world.js";
import { testAgent } from "./test-agent.js";

function op(a: SimAgent, kind: WireOperation["kind"], at: number): WireOperation {
  return {
    id: `c0/${a.script.id}/${kind}`,
    campaignId: "c0",
    kind,
    version: NEW,
    sequence: 2,
    at,
    agentVersion: a.version,
    agentConfirmed: a.confirmedSequence,
  };
}

/** The agent takes the upgrade at `at` and comes back on NEW with a new boot 10 ms later. */
function upgrade(a: SimAgent, at: number): void {
  a.record.sent.push(op(a, "upgrade", at));
  a.record.received.push(op(a, "upgrade", at + 5));
  a.applied.set(`c0/${a.script.id}/upgrade`, 1);
  a.version = NEW;
  a.record.runs.push({ version: NEW, at: at + 6 });
  a.boot++;
  a.record.connects.push({ at: at + 10, boot: a.boot, version: NEW });
}

/** The agent receives the offer at `at` and answers `phase` (never applying it). */
function answers(a: SimAgent, at: number, phase: "DEFERRED" | "FAILED"): void {
  const id = `c0/${a.script.id}/upgrade`;
  a.record.sent.push(op(a, "upgrade", at));
  a.record.received.push(op(a, "upgrade", at + 1));
  a.record.reports.push({ operationId: id, phase, version: OLD, at: at + 2 });
  if (phase === "DEFERRED") a.record.deferrals?.push({ operationId: id, at: at + 2 });
}

/** A world of two agents and one campaign c0 over them in one batch (threshold 0 %), completed. */
function completedWorld(a: SimAgent, b: SimAgent): OutcomeWorld {
  const { store, campaign, fleet, set } = oneBatchCampaign([a, b], { failureThresholdPercent: 0 });
  set(completedAt100(campaign), { state: "succeeded" });
  return {
    store,
    fleetStore: new MemoryFleetStore(store),
    fleet,
    disabledAt: new Map(),
    state: newOutcomeCheckState(),
  };
}

describe("O2 and a node that deferred", () => {
  it("holds when the node only deferred (its latest answer DEFERRED, never applied)", () => {
    const a = testAgent("n1", { connected: true });
    const b = testAgent("n2", { connected: true });
    upgrade(a, 10);
    answers(b, 15, "DEFERRED");
    expect(outcomeViolations(completedWorld(a, b), 100)).toEqual([]);
  });

  it("breaks when the node deferred once, then failed the re-offer without applying it", () => {
    const a = testAgent("n1", { connected: true });
    const b = testAgent("n2", { connected: true });
    upgrade(a, 10);
    answers(b, 15, "DEFERRED");
    answers(b, 40, "FAILED"); // its download failed: never applied, still on 1.0.0
    expect(b.version).toBe(OLD);
    expect(outcomeViolations(completedWorld(a, b), 100).join("\n")).toMatch(
      /^O2: c0 says completed but batch 1 had 1 true failures of 2 offered \(threshold 0 %\): n2$/m,
    );
  });
});
