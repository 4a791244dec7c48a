/**
 * When a campaign without maintenance windows asks to be decided again: its batch's minimum
 * and soak end at their plain times (start + paused time + minimum, settled + soak),
 * and a stored spec with an empty window list decides and wakes exactly as one without.
 */
import { describe, expect, it } from "vitest";
import type { CampaignSpecInput, Decision } from "../../../control/campaign/index.js";
import type { Harness } from "./harness.js";
import { advance, bringBack, fleet, MIN, start, tick } from "./harness.js";

/** Two batches of half an hour and a soak of ten minutes, one node each. */
const spec: Partial<CampaignSpecInput> = {
  batches: [
    { percent: 50, minDurationMs: 30 * MIN },
    { percent: 100, minDurationMs: 30 * MIN },
  ],
  soakMs: 10 * MIN,
  failureThresholdPercent: 100,
  disruptionBudgetPercent: 100,
};

/** The same campaign with its stored spec holding an empty window list. */
function withEmptyWindows(h: Harness): Harness {
  h.campaign = { ...h.campaign, spec: { ...h.campaign.spec, windows: [] } };
  return h;
}

/**
 * Runs the campaign: offered at 0, its node back at 2 min, paused 5–12 min, then the next wake
 * taken as it comes, four times. Returns every decision's wake and the batch it left current.
 */
function run(h: Harness): { wakes: (number | undefined)[]; batches: number[] } {
  const wakes: (number | undefined)[] = [];
  const batches: number[] = [];
  const record = (d: Decision): Decision => {
    wakes.push(d.wakeAt);
    batches.push(h.campaign.currentBatch);
    return d;
  };
  record(tick(h));
  h.now = 2 * MIN;
  bringBack(h, ["node-000"]);
  record(tick(h));
  h.now = 5 * MIN;
  record(tick(h, [{ kind: "pause" }]));
  h.now = 12 * MIN;
  let last = record(tick(h, [{ kind: "resume" }]));
  for (let i = 0; i < 4 && last.wakeAt !== undefined; i++) {
    last = record(advance(h, last.wakeAt - h.now));
  }
  return { wakes, batches };
}

describe("when a campaign without windows wakes", () => {
  it("at the plain end of its batch's minimum, moved on by the pause, then at the plain end of its soak", () => {
    const h = start(fleet(2), spec);
    const { wakes, batches } = run(h);
    // Offered at 0: its reconnect deadline; back at 2 min: the soak's end (2 + 10), before the
    // minimum's; paused: none; resumed at 12 min, the soak over: the minimum's end, 30 min
    // moved on by the 7 paused (37); there batch 1 starts and offers: its reconnect deadline.
    expect(wakes.slice(0, 5)).toEqual([10 * MIN, 12 * MIN, undefined, 37 * MIN, 47 * MIN]);
    expect(batches.slice(0, 5)).toEqual([0, 0, 0, 0, 1]);
    expect(h.campaign.batches[0]).toMatchObject({
      state: "passed",
      settledAt: 2 * MIN,
      pausedMs: 7 * MIN,
    });
  });

  it("alike with an empty window list stored in its spec", () => {
    const plain = start(fleet(2), spec);
    const empty = withEmptyWindows(start(fleet(2), spec));
    const a = run(plain);
    const b = run(empty);
    expect(b.wakes).toEqual(a.wakes);
    expect(b.batches).toEqual(a.batches);
    expect(empty.nodes).toEqual(plain.nodes);
    expect({ ...empty.campaign, spec: plain.campaign.spec }).toEqual(plain.campaign);
  });

  it("at the soak's plain end when it comes after the minimum", () => {
    const h = start(fleet(2), { ...spec, soakMs: 25 * MIN });
    tick(h);
    h.now = 20 * MIN;
    bringBack(h, ["node-000"]);
    expect(tick(h).wakeAt).toBe(30 * MIN);
    expect(advance(h, 10 * MIN).wakeAt).toBe(45 * MIN);
    expect(h.campaign.currentBatch).toBe(0);
  });
});
