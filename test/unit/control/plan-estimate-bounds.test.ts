/**
 * What bounds a plan's duration estimate, as `campaign plan` prints after it: the slots that
 * split a batch into rounds (the tightest pool's budget, or the concurrency when it is lower),
 * the config grace per round, minimum durations, soak, reconnect timeout and windows.
 */
import { describe, expect, it } from "vitest";
import { estimateBounds } from "../../../control/admin/plan-estimate-bounds.js";
import {
  type CampaignSpecInput,
  estimateCampaign,
  planCampaign,
  resolveSpec,
} from "../../../control/campaign/index.js";
import { fleet, MIN, NEW } from "../campaign/harness.js";
import { windowsOf } from "../campaign/windows-of.js";

function bounds(nodes: number, input: Partial<CampaignSpecInput>, pool?: (i: number) => string) {
  const spec = resolveSpec({ targetVersion: NEW, ...input });
  const plan = planCampaign(spec, fleet(nodes, pool === undefined ? {} : { pool }), 100);
  return estimateBounds(spec, plan, estimateCampaign(spec, plan, 0));
}

describe("what bounds the estimate", () => {
  it("names the default pool budget, the 1-minute config grace and the minimum durations", () => {
    // 100 nodes of one pool at 5 %: 5 at once; batches of 5, 20, 75 nodes: 1 + 4 + 15 rounds.
    expect(bounds(100, {}, () => "web")).toEqual([
      "pool disruption budget 5 %: 5 of pool web at once, 15 rounds in batch 3",
      "config grace 60 s per round (20 rounds)",
      "the batches' minimum durations",
      "reconnect timeout 10 min per round at the longest",
    ]);
  });

  it("names the concurrency when it is tighter than the pools' budget", () => {
    expect(
      bounds(10, {
        concurrency: 2,
        disruptionBudgetPercent: 100,
        configGraceMs: 0,
        batches: [{ percent: 100, minDurationMs: 0 }],
      }),
    ).toEqual([
      "concurrency 2: 5 rounds in batch 1",
      "reconnect timeout 10 min per round at the longest",
    ]);
  });

  it("names the soak and the windows, and nothing when no node would be offered", () => {
    const spec = {
      soakMs: 5 * MIN,
      configGraceMs: 0,
      disruptionBudgetPercent: 100,
      windows: windowsOf("01:00-02:00"),
      batches: [{ percent: 100, minDurationMs: 0 }],
    };
    expect(bounds(4, spec)).toEqual([
      "soak 5 min per batch",
      "reconnect timeout 10 min per round at the longest",
      "maintenance windows (only time inside them counts)",
    ]);
    expect(bounds(0, spec)).toEqual([]);
  });
});
