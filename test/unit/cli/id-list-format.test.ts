/**
 * Lists of node ids stay readable at fleet scale: `campaign plan`, `campaign show`'s selector
 * and `desired list` name the first ten and how many more; `-o wide` (and `--json`) carry them
 * all. Found by the operator's day: a plan printed 58 ids on one line, a retry's selector 303.
 */
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { formatCampaignSummary, formatPlan } from "../../../cli/commands/campaign-format.js";
import { selectorText } from "../../../cli/commands/desired.js";
import { idList } from "../../../cli/id-list.js";
import {
  CampaignSchema,
  PlanCampaignResponseSchema,
} from "../../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";

const ids = (n: number) => Array.from({ length: n }, (_, i) => `web-${String(i).padStart(5, "0")}`);

describe("node id lists", () => {
  it("names ten ids and how many more, or all of them when asked or when few", () => {
    expect(idList(ids(3))).toBe("web-00000,web-00001,web-00002");
    expect(idList(ids(10))).toBe(ids(10).join(","));
    expect(idList(ids(58))).toBe(`${ids(10).join(",")},… and 48 more (-o wide lists all)`);
    expect(idList(ids(58), true)).toBe(ids(58).join(","));
  });

  it("shortens the plan's lines of up-to-date and skipped nodes unless wide", () => {
    const plan = create(PlanCampaignResponseSchema, {
      totalNodes: 100,
      batches: [{ index: 0, percent: 100, nodeIds: ids(42) }],
      upToDateNodeIds: ids(58),
      skipped: [{ code: "node_offline", message: "offline", nodeIds: ids(12) }],
    });
    const out = formatPlan("1.1.0", plan, false);
    expect(out).toContain("58 node(s) already run 1.1.0: web-00000,");
    expect(out).toContain("web-00009,… and 48 more (-o wide lists all)\n");
    expect(out).toContain("web-00009,… and 2 more (-o wide lists all)\n");
    expect(out).not.toContain("web-00057");
    expect(formatPlan("1.1.0", plan, true)).toContain(ids(58).join(","));
  });

  it("shortens a retry's selector of node ids in campaign show unless wide", () => {
    const campaign = create(CampaignSchema, {
      id: "c1",
      spec: { targetVersion: "1.1.0", selector: { nodeIds: ids(303) } },
    });
    const line = (wide: boolean) =>
      formatCampaignSummary(campaign, wide)
        .split("\n")
        .find((l) => l.startsWith("Selector")) ?? "";
    expect(line(false)).toMatch(
      /nodes web-00000,.*web-00009,… and 293 more \(-o wide lists all\)$/,
    );
    expect(line(true)).toContain(ids(303).join(","));
  });

  it("shortens a desired version's node selector in desired list", () => {
    expect(selectorText({ selector: { pools: [], labels: {}, nodeIds: ids(153) } })).toBe(
      `nodes=${ids(10).join(",")},… and 143 more (-o wide lists all)`,
    );
  });
});
