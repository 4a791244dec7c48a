/** `yankedPreviousNodeIds`: the nodes of a plan a breach would not roll back (yanked current release). */
import { describe, expect, it } from "vitest";
import {
  planCampaign,
  resolveSpec,
  yankedPreviousNodeIds,
} from "../../../control/campaign/index.js";
import { fleet, NEW, OLD } from "./harness.js";

describe("yankedPreviousNodeIds", () => {
  const candidates = fleet(6, {
    version: (i) => (i === 5 ? NEW : i % 2 === 0 ? OLD : "1.5.0"),
    capabilities: (i) => (i === 4 ? [] : ["upgrade.v1"]),
  });
  const plan = planCampaign(resolveSpec({ targetVersion: NEW }), candidates);
  const versionOf = (id: string) => candidates.find((c) => c.id === id)?.agentVersion;

  it("names the offered nodes whose current release is yanked, not the skipped or current ones", () => {
    const ids = yankedPreviousNodeIds(plan, versionOf, new Set([OLD, NEW]));
    // node-004 (OLD) lacks upgrade.v1: skipped; node-005 already runs the target.
    expect(ids.sort()).toEqual(["node-000", "node-002"]);
  });

  it("names none when no release is yanked", () => {
    expect(yankedPreviousNodeIds(plan, versionOf, new Map())).toEqual([]);
    expect(yankedPreviousNodeIds(plan, versionOf, new Set(["9.9.9"]))).toEqual([]);
  });
});
