/**
 * The duration estimate of a plan: minimum durations, slots (concurrency and pool budget),
 * reconnect timeout and config grace per round, soak, and maintenance windows. Each row's
 * numbers are worked out by hand in its name and comment.
 */
import { describe, expect, it } from "vitest";
import {
  afterOpenTime,
  type CampaignSpecInput,
  estimateCampaign,
  planCampaign,
  resolveSpec,
} from "../../../control/campaign/index.js";
import { fleet, MIN, NEW } from "./harness.js";
import { windowsOf } from "./windows-of.js";

const HOUR = 60 * MIN;

interface Row {
  readonly name: string;
  readonly nodes: number;
  readonly spec: Partial<CampaignSpecInput>;
  readonly upToDate?: number;
  readonly rounds: number[];
  readonly minMs: number[];
  readonly maxMs: number[];
  readonly earliest: number;
  readonly latest: number;
}

const rows: Row[] = [
  {
    // 5, 20, 75 nodes; 5 % of 100 = 5 slots: 1, 4, 15 rounds of 0 to 10 min, plus 1 min grace.
    name: "defaults over 100 nodes: 90 min if nodes come back at once, 239 min if each takes its whole reconnect timeout",
    nodes: 100,
    spec: {},
    rounds: [1, 4, 15],
    minMs: [30 * MIN, 30 * MIN, 30 * MIN],
    maxMs: [30 * MIN, 44 * MIN, 165 * MIN],
    earliest: 90 * MIN,
    latest: 239 * MIN,
  },
  {
    name: "concurrency 2 over 10 nodes with a 5-minute reconnect timeout: 5 rounds, up to 25 min",
    nodes: 10,
    spec: {
      concurrency: 2,
      disruptionBudgetPercent: 100,
      reconnectTimeoutMs: 5 * MIN,
      configGraceMs: 0,
      batches: [{ percent: 100, minDurationMs: 0 }],
    },
    rounds: [5],
    minMs: [0],
    maxMs: [25 * MIN],
    earliest: 0,
    latest: 25 * MIN,
  },
  {
    name: "nodes already on the target take no round, and a soak follows the last round",
    nodes: 4,
    upToDate: 3,
    spec: {
      disruptionBudgetPercent: 100,
      configGraceMs: 0,
      soakMs: 10 * MIN,
      batches: [{ percent: 100, minDurationMs: 5 * MIN }],
    },
    rounds: [1],
    minMs: [10 * MIN],
    maxMs: [20 * MIN],
    earliest: 10 * MIN,
    latest: 20 * MIN,
  },
  {
    // t=0 is 00:00 UTC: nothing counts before 01:00; 90 min is 60 today and 30 tomorrow.
    name: "only window time counts: a 90-minute batch in a daily 01:00-02:00 window ends at 01:30 the next day",
    nodes: 1,
    spec: {
      windows: windowsOf("01:00-02:00"),
      disruptionBudgetPercent: 100,
      configGraceMs: 0,
      batches: [{ percent: 100, minDurationMs: 90 * MIN }],
    },
    rounds: [1],
    minMs: [90 * MIN],
    maxMs: [90 * MIN],
    earliest: 25 * HOUR + 30 * MIN,
    latest: 25 * HOUR + 30 * MIN,
  },
];

describe("how long a campaign will take", () => {
  it.each(rows)("$name", (row) => {
    const spec = resolveSpec({ targetVersion: NEW, ...row.spec });
    const plan = planCampaign(
      spec,
      fleet(row.nodes, { version: (i) => (i < (row.upToDate ?? 0) ? NEW : "1.0.0") }),
      100,
    );
    const e = estimateCampaign(spec, plan, 0);
    expect(e.batches.map((b) => b.rounds)).toEqual(row.rounds);
    expect(e.batches.map((b) => b.minMs)).toEqual(row.minMs);
    expect(e.batches.map((b) => b.maxMs)).toEqual(row.maxMs);
    expect([e.earliestEndAt, e.latestEndAt]).toEqual([row.earliest, row.latest]);
  });

  it("counts open time only, waiting for a closed window to open", () => {
    const w = windowsOf("01:00-02:00");
    expect(afterOpenTime(undefined, 5, 10)).toBe(15);
    expect(afterOpenTime(w, 0, 0)).toBe(HOUR);
    expect(afterOpenTime(w, 90 * MIN, 20 * MIN)).toBe(110 * MIN);
    expect(afterOpenTime(w, 110 * MIN, 20 * MIN)).toBe(25 * HOUR + 10 * MIN);
  });
});
