/** `campaign plan` says how many nodes run a yanked release (a breach would not roll them back). */
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { formatPlan } from "../../../cli/commands/campaign-format.js";
import { PlanCampaignResponseSchema } from "../../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";

describe("formatPlan", () => {
  it("warns of the nodes whose current release is yanked, naming them", () => {
    const plan = create(PlanCampaignResponseSchema, {
      totalNodes: 3,
      batches: [{ index: 0, percent: 100, nodeIds: ["a", "b", "c"] }],
      yankedPreviousNodeIds: ["a", "c"],
    });
    const out = formatPlan("2.0.0", plan, false);
    expect(out).toContain(
      "warning: 2 node(s) run a yanked release; a breach would not roll them back onto it (rollback_withheld), they would stay on 2.0.0: a,c",
    );
  });

  it("says nothing of yanks when none of the nodes runs a yanked release", () => {
    const plan = create(PlanCampaignResponseSchema, {
      totalNodes: 1,
      batches: [{ index: 0, percent: 100, nodeIds: ["a"] }],
    });
    expect(formatPlan("2.0.0", plan, false)).not.toContain("yanked");
  });
});
