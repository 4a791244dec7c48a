import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { planRetry } from "../../../control/campaign/index.js";
import type { CampaignNode, CampaignState, NodeState } from "../../../control/campaign/model.js";
import {
  type Campaign,
  CampaignPhase,
  CampaignSchema,
  NodeState as NodeStateEnum,
} from "../../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { retryLabel } from "../../../ui/retry-offer.js";

const ALL_STATES: readonly NodeState[] = [
  "waiting",
  "offered",
  "applying",
  "restarting",
  "verifying",
  "succeeded",
  "failed",
  "timed_out",
  "skipped",
  "canceled",
  "rolling_back",
  "rolled_back",
  "rollback_failed",
];

const enumOf = (s: NodeState) => NodeStateEnum[s.toUpperCase() as keyof typeof NodeStateEnum];

/** How many nodes the engine's retry of an ended campaign whose nodes are in `states` takes. */
function engineTakes(states: readonly NodeState[]): number {
  const spec = { exclude: { nodeIds: [], tags: [] } };
  const campaign = { id: "c-1", phase: "completed", spec } as unknown as CampaignState;
  const nodes = states.map((state, order) => ({ nodeId: `n-${order}`, order, state }));
  const plan = planRetry(campaign, nodes as unknown as CampaignNode[]);
  return plan.ok ? plan.nodeIds.length : 0;
}

function campaignOf(phase: CampaignPhase, states: readonly NodeState[]): Campaign {
  const counts = new Map<NodeState, number>();
  for (const s of states) counts.set(s, (counts.get(s) ?? 0) + 1);
  return create(CampaignSchema, {
    phase,
    counts: [...counts].map(([state, count]) => ({ state: enumOf(state), count })),
  });
}

describe("the dashboard's retry button", () => {
  it("offers a retry of exactly the nodes the engine's retry takes, for every single node state", () => {
    for (const state of ALL_STATES) {
      const taken = engineTakes(["succeeded", state, state]);
      const label = retryLabel(campaignOf(CampaignPhase.COMPLETED, ["succeeded", state, state]));
      expect({ state, label }).toEqual({
        state,
        label: taken === 0 ? undefined : `Retry ${taken} nodes`,
      });
    }
  });

  it("offers no retry of a completed campaign with 0 nodes to take again", () => {
    expect(retryLabel(campaignOf(CampaignPhase.COMPLETED, ["succeeded", "succeeded"]))).toBe(
      undefined,
    );
  });

  it("counts every retried state together, one node in the singular", () => {
    expect(retryLabel(campaignOf(CampaignPhase.ROLLED_BACK, ["succeeded", "skipped"]))).toBe(
      "Retry 1 node",
    );
    expect(
      retryLabel(
        campaignOf(CampaignPhase.FAILED, ["failed", "timed_out", "rolled_back", "canceled"]),
      ),
    ).toBe("Retry 4 nodes");
  });

  it("offers no retry while the campaign runs, is paused or rolls back", () => {
    for (const phase of [CampaignPhase.RUNNING, CampaignPhase.PAUSED, CampaignPhase.ROLLING_BACK]) {
      expect(retryLabel(campaignOf(phase, ["failed"]))).toBe(undefined);
    }
  });
});
