/**
 * O2 against nodes that deferred: a node that only said "not now" is neither offered nor failed,
 * but one that deferred once and then failed the re-offer without applying it (its download
 * failed, its verification refused it) is a true failure: O2 exempts only a node whose every
 * answer was DEFERRED, so an engine that counted such a node as a success is seen.
 */
import { describe, expect, it } from "vitest";
import {
  type CampaignNode,
  type CampaignState,
  createCampaign,
  planCampaign,
  resolveSpec,
} from "../../control/campaign/index.js";
import { MemoryCampaignStore, MemoryFleetStore } from "../../control/campaign-store/index.js";
import { ManualClock } from "../../control/manual-clock.js";
import type { SimAgent } from "../../simulation/agent-script.js";
import type { SimFleet } from "../../simulation/agents.js";
import type { WireOperation } from "../../simulation/ground-truth.js";
import { outcomeViolations } from "../../simulation/outcome-invariants.js";
import { newOutcomeCheckState, type OutcomeWorld } from "../../simulation/outcome-world.js";
import { testAgent } from "./test-agent.js";

const OLD = "1.0.0";
const NEW = "2.0.0";

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
  const store = new MemoryCampaignStore(new ManualClock(0));
  const spec = resolveSpec({
    targetVersion: NEW,
    batches: [{ percent: 100, minDurationMs: 0 }],
    failureThresholdPercent: 0,
  });
  const candidates = [a, b].map((x) => ({
    id: x.script.id,
    labels: {},
    pool: "",
    enabled: true,
    everConnected: true,
    capabilities: ["upgrade.v1"],
    agentVersion: OLD,
  }));
  const { campaign, nodes } = createCampaign({
    id: "c0",
    spec,
    plan: planCampaign(spec, candidates),
    target: { version: NEW, sequence: 2 },
    now: 0,
  });
  const done: CampaignState = {
    ...campaign,
    phase: "completed",
    finishedAt: 100,
    batches: campaign.batches.map((x) => ({ ...x, state: "passed", startedAt: 0, endedAt: 100 })),
  };
  store.tables.campaigns.set("c0", {
    campaign: done,
    targetVersion: NEW,
    createdBy: "operator",
    createdAt: 0,
    updatedAt: new Date(0),
    version: 1,
  });
  store.tables.nodes.set(
    "c0",
    nodes.map((n): CampaignNode => ({ ...n, state: "succeeded" })),
  );
  return {
    store,
    fleetStore: new MemoryFleetStore(store),
    fleet: { agents: new Map([a, b].map((x) => [x.script.id, x])) } as unknown as SimFleet,
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
