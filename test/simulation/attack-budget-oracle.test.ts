/**
 * B1 and B2 on hand-built worlds, against nodes that deferred: B2 does not count a DEFERRED
 * report as an outcome, so a batch that passed its minimum sample on a node that only said "not
 * now" is seen; B1 counts a node that deferred once and then failed the re-offer without
 * applying it. The offline case shows B2 itself works.
 */
import { describe, expect, it } from "vitest";
import type { CampaignSpecInput } from "../../control/campaign/index.js";
import type { SimAgent } from "../../simulation/agent-script.js";
import { budgetViolations, newBudgetCheckState } from "../../simulation/budget-invariants.js";
import type { WireOperation } from "../../simulation/ground-truth.js";
import { completedAt100, NEW, OLD, oneBatchCampaign } from "./hand-built-world.js";
import { testAgent } from "./test-agent.js";

function op(a: SimAgent, at: number): WireOperation {
  return {
    id: `c0/${a.script.id}/upgrade`,
    campaignId: "c0",
    kind: "upgrade",
    version: NEW,
    sequence: 2,
    at,
    agentVersion: a.version,
    agentConfirmed: a.confirmedSequence,
  };
}

/** The agent takes the upgrade at `at` and comes back on NEW with a new boot 10 ms later. */
function upgrade(a: SimAgent, at: number): void {
  a.record.sent.push(op(a, at));
  a.record.received.push(op(a, at + 5));
  a.applied.set(`c0/${a.script.id}/upgrade`, 1);
  a.version = NEW;
  a.record.runs.push({ version: NEW, at: at + 6 });
  a.boot++;
  a.record.connects.push({ at: at + 10, boot: a.boot, version: NEW });
  a.record.reports.push({
    operationId: `c0/${a.script.id}/upgrade`,
    phase: "RESTARTING",
    version: NEW,
    at: at + 5,
  });
}

/** The agent receives the offer at `at` and answers `phase` without applying it. */
function answers(a: SimAgent, at: number, phase: "DEFERRED" | "FAILED"): void {
  const id = `c0/${a.script.id}/upgrade`;
  a.record.sent.push(op(a, at));
  a.record.received.push(op(a, at + 1));
  a.record.reports.push({ operationId: id, phase, version: OLD, at: at + 2 });
  if (phase === "DEFERRED") a.record.deferrals?.push({ operationId: id, at: at + 2 });
}

/** Campaign c0 (one batch, `spec`) over `agents`, its batch passed and the campaign completed at 100. */
function passedWorld(agents: SimAgent[], spec: Partial<CampaignSpecInput>) {
  const { store, campaign, fleet, set } = oneBatchCampaign(agents, {
    failureThresholdPercent: 100,
    ...spec,
  });
  set(completedAt100(campaign), { state: "succeeded" });
  return {
    store,
    fleet,
    commands: [],
    platform: "linux-amd64",
    state: newBudgetCheckState(),
  };
}

const three = () => ["n1", "n2", "n3"].map((id) => testAgent(id, { connected: true }));

describe("B2: the minimum sample, and nodes that deferred", () => {
  it("breaks when a batch passed a sample of 3 on two upgraded agents and one never sent it", () => {
    const [a, b, c] = three() as [SimAgent, SimAgent, SimAgent];
    upgrade(a, 10);
    upgrade(b, 20);
    expect(budgetViolations(passedWorld([a, b, c], { minCanaries: 3 }), 100).join("\n")).toMatch(
      /^B2: c0 passed batch 1 with 2 of its agents sent the upgrade and settled; min canaries asks for 3$/m,
    );
  });

  it("breaks when the third agent only answered DEFERRED (it never took the upgrade)", () => {
    const [a, b, c] = three() as [SimAgent, SimAgent, SimAgent];
    upgrade(a, 10);
    upgrade(b, 20);
    answers(c, 30, "DEFERRED");
    expect(budgetViolations(passedWorld([a, b, c], { minCanaries: 3 }), 100).join("\n")).toMatch(
      /^B2: c0 passed batch 1 with 2 of its agents/m,
    );
  });
});

describe("B1: the failure budget, and nodes that deferred", () => {
  it("holds when the node only deferred", () => {
    const [a, b] = three() as [SimAgent, SimAgent];
    upgrade(a, 10);
    answers(b, 15, "DEFERRED");
    expect(
      budgetViolations(passedWorld([a, b], { maxFailures: { kind: "count", count: 0 } }), 100),
    ).toEqual([]);
  });

  it("breaks when the node deferred once, then failed the re-offer without applying it", () => {
    const [a, b] = three() as [SimAgent, SimAgent];
    upgrade(a, 10);
    answers(b, 15, "DEFERRED");
    answers(b, 40, "FAILED");
    expect(
      budgetViolations(passedWorld([a, b], { maxFailures: { kind: "count", count: 0 } }), 100).join(
        "\n",
      ),
    ).toMatch(/^B1: c0 completed with 1 agents not on 2\.0\.0/m);
  });
});
