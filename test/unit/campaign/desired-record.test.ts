import { describe, expect, it } from "vitest";
import {
  type CampaignNode,
  createCampaign,
  desiredRecordRefusal,
  type FailureBudget,
  type NodeState,
  planCampaign,
  resolveSpec,
} from "../../../control/campaign/index.js";

/** A completed campaign of two batches (50 %, 100 %) over `states`, in canary order. */
function completed(threshold: number, states: readonly NodeState[], maxFailures?: FailureBudget) {
  const spec = resolveSpec({
    maxFailures,
    targetVersion: "2.0.0",
    batches: [
      { percent: 50, minDurationMs: 0 },
      { percent: 100, minDurationMs: 0 },
    ],
    failureThresholdPercent: threshold,
  });
  const plan = planCampaign(
    spec,
    states.map((_, i) => ({
      id: `n${i}`,
      labels: {},
      pool: "",
      enabled: true,
      everConnected: true,
      capabilities: ["upgrade.v1"],
      agentVersion: "1.0.0",
    })),
  );
  const c = createCampaign({
    id: "c1",
    spec,
    plan,
    target: { version: "2.0.0", sequence: 2 },
    now: 0,
  });
  const nodes: CampaignNode[] = c.nodes.map((n, i) => ({ ...n, state: states[i] as NodeState }));
  return { campaign: { ...c.campaign, phase: "completed" as const }, nodes };
}

describe("whether a completed campaign records its target as desired", () => {
  const cases: [string, number, NodeState[], string | undefined][] = [
    ["every node succeeded: recorded", 5, ["succeeded", "succeeded"], undefined],
    [
      "one failed and two skipped under a 100 % threshold: no node succeeded",
      100,
      ["failed", "skipped", "skipped"],
      "no node succeeded",
    ],
    ["every node skipped: no node succeeded", 5, ["skipped", "skipped"], "no node succeeded"],
    [
      "already current counts as succeeded (that node runs the target)",
      5,
      ["succeeded", "skipped"],
      undefined,
    ],
    [
      "failures within the threshold: recorded",
      50,
      ["succeeded", "failed", "succeeded", "succeeded"],
      undefined,
    ],
    [
      "a batch with more failures than the threshold (accepted on resume): not recorded",
      0,
      ["succeeded", "succeeded", "timed_out", "succeeded"],
      "1 of 2 nodes of batch 2 failed (threshold 0 %)",
    ],
  ];
  it.each(cases)("%s", (_name, threshold, states, reason) => {
    const { campaign, nodes } = completed(threshold, states);
    expect(desiredRecordRefusal(campaign, nodes)).toBe(reason);
  });
});

describe("a completed campaign over its own failure budget records no desired version", () => {
  const cases: [string, FailureBudget, NodeState[], string | undefined][] = [
    [
      "two failures, one per batch, each within a 50 % threshold, against max failures 1: not recorded (an operator resumed past the budget)",
      { kind: "count", count: 1 },
      ["succeeded", "failed", "succeeded", "timed_out"],
      "2 of 4 nodes of the campaign failed (max failures 1: 1 allowed)",
    ],
    [
      "two failures against max failures 2: recorded",
      { kind: "count", count: 2 },
      ["succeeded", "failed", "succeeded", "timed_out"],
      undefined,
    ],
    [
      "two of four failed against 25 %: not recorded",
      { kind: "percent", percent: 25 },
      ["succeeded", "failed", "succeeded", "failed"],
      "2 of 4 nodes of the campaign failed (max failures 25%: 1 allowed)",
    ],
    [
      "skipped nodes are not in the denominator: one of three offerable failed against 25 %: not recorded",
      { kind: "percent", percent: 25 },
      ["succeeded", "failed", "skipped", "succeeded"],
      "1 of 3 nodes of the campaign failed (max failures 25%: 0 allowed)",
    ],
  ];
  it.each(cases)("%s", (_name, budget, states, reason) => {
    const { campaign, nodes } = completed(50, states, budget);
    expect(desiredRecordRefusal(campaign, nodes)).toBe(reason);
  });
});
