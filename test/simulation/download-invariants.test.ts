/**
 * The download budget's invariant (B4) on hand-built records: it breaks when more agents'
 * own records show a download of one campaign's artifact at once than its `maxDownloads`, and
 * holds when they do not (a download that ended at the instant another began is not counted).
 */
import { describe, expect, it } from "vitest";
import type { MemoryCampaignStore } from "../../control/campaign-store/index.js";
import type { SimFleet } from "../../simulation/agents.js";
import { downloadViolations, newDownloadCheckState } from "../../simulation/download-invariants.js";
import {
  type AgentRecord,
  beginDownload,
  endDownload,
  newAgentRecord,
} from "../../simulation/ground-truth.js";

function world(maxDownloads: number | undefined, agents: number) {
  const records = new Map<string, { record: AgentRecord }>();
  for (let i = 0; i < agents; i++) records.set(`n${i}`, { record: newAgentRecord("1.0.0") });
  const store = {
    tables: {
      campaigns: new Map([["c1", { campaign: { spec: { maxDownloads } } }]]),
    },
  } as unknown as MemoryCampaignStore;
  const fleet = { agents: records } as unknown as SimFleet;
  const rec = (i: number) => (records.get(`n${i}`) as { record: AgentRecord }).record;
  return { store, fleet, rec, state: newDownloadCheckState() };
}

describe("B4, the download budget from the agents' records", () => {
  it("breaks when 3 agents download c1's artifact at once and it allows 2", () => {
    const w = world(2, 3);
    beginDownload(w.rec(0), "c1/n0/upgrade", 100);
    beginDownload(w.rec(1), "c1/n1/upgrade", 200);
    beginDownload(w.rec(2), "c1/n2/upgrade", 300);
    const found = downloadViolations(w.store, w.fleet, w.state);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/^B4: 3 agents downloading c1's artifact at 300 ms/);
  });

  it("holds when a download ended at the instant the next began", () => {
    const w = world(1, 2);
    beginDownload(w.rec(0), "c1/n0/upgrade", 100);
    endDownload(w.rec(0), 250);
    beginDownload(w.rec(1), "c1/n1/upgrade", 250);
    expect(downloadViolations(w.store, w.fleet, w.state)).toEqual([]);
    expect(w.state.peak.get("c1")).toBe(1);
  });

  it("judges each download once, when it begins, across steps", () => {
    const w = world(1, 2);
    beginDownload(w.rec(0), "c1/n0/upgrade", 100);
    expect(downloadViolations(w.store, w.fleet, w.state)).toEqual([]);
    beginDownload(w.rec(1), "c1/n1/upgrade", 150);
    expect(downloadViolations(w.store, w.fleet, w.state)).toHaveLength(1);
    expect(downloadViolations(w.store, w.fleet, w.state)).toEqual([]);
  });

  it("holds for a campaign without a download budget, however many download", () => {
    const w = world(undefined, 3);
    for (let i = 0; i < 3; i++) beginDownload(w.rec(i), `c1/n${i}/upgrade`, 100);
    expect(downloadViolations(w.store, w.fleet, w.state)).toEqual([]);
    expect(w.state.peak.get("c1")).toBe(3);
  });
});
