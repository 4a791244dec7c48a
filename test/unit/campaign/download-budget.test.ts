/**
 * The download budget (`--max-downloads N`): at most N of a campaign's nodes fetching the
 * artifact at once, beside the batch's concurrency. A node holds a download slot from its offer
 * until it reports that its download ended (VERIFYING or later) or it settles; judged here
 * against hand-counted expectations on the pure engine.
 */
import { describe, expect, it } from "vitest";
import { resolveSpec, validateSpec } from "../../../control/campaign/index.js";
import {
  advance,
  bringBack,
  fleet,
  inState,
  MIN,
  NEW,
  report,
  sent,
  start,
  tick,
} from "./harness.js";

const ALL = [{ percent: 100, minDurationMs: MIN }];
/** One batch of every node, with no pool budget in the way. */
const WIDE = { batches: ALL, disruptionBudgetPercent: 100 };

describe("download budget", () => {
  it("offers 3 of 20 nodes when --max-downloads is 3 and the batch has room for all", () => {
    const h = start(fleet(20), { ...WIDE, maxDownloads: 3 });
    tick(h);
    expect(sent(h, "upgrade")).toHaveLength(3);
  });

  it("keeps the slot of a node that reported ACCEPTED or DOWNLOADING", () => {
    const h = start(fleet(20), { ...WIDE, maxDownloads: 3 });
    tick(h);
    const [a, b] = sent(h, "upgrade") as [string, string];
    report(h, a, "ACCEPTED");
    report(h, b, "DOWNLOADING");
    advance(h, 1000);
    expect(sent(h, "upgrade")).toHaveLength(3);
  });

  it("frees a slot when a node reports VERIFYING, APPLYING or RESTARTING: one more offer each", () => {
    const h = start(fleet(20), { ...WIDE, maxDownloads: 3 });
    tick(h);
    const [a, b, c] = sent(h, "upgrade") as [string, string, string];
    report(h, a, "VERIFYING");
    advance(h, 1000);
    expect(sent(h, "upgrade")).toHaveLength(4);
    report(h, b, "APPLYING");
    report(h, c, "RESTARTING");
    advance(h, 1000);
    expect(sent(h, "upgrade")).toHaveLength(6);
  });

  it("frees a slot when a node fails or comes back on the target", () => {
    const h = start(fleet(40), { ...WIDE, maxDownloads: 2, failureThresholdPercent: 50 });
    tick(h);
    const [a, b] = sent(h, "upgrade") as [string, string];
    report(h, a, "FAILED");
    bringBack(h, [b], NEW);
    advance(h, 1000);
    expect(inState(h, "failed")).toEqual([a]);
    expect(sent(h, "upgrade")).toHaveLength(4);
  });

  it("stays within the batch's concurrency when it is the smaller of the two", () => {
    const h = start(fleet(20), { ...WIDE, maxDownloads: 5, concurrency: 2 });
    tick(h);
    expect(sent(h, "upgrade")).toHaveLength(2);
  });

  it("bounds downloads, not the upgrades in flight: nodes past their download leave room", () => {
    const h = start(fleet(20), { ...WIDE, maxDownloads: 2, concurrency: 5 });
    tick(h);
    for (const id of sent(h, "upgrade")) report(h, id, "APPLYING");
    advance(h, 1000);
    expect(sent(h, "upgrade")).toHaveLength(4);
    for (const id of sent(h, "upgrade")) report(h, id, "RESTARTING");
    advance(h, 1000);
    // concurrency 5 now bounds it: 4 restarting + 1 new
    expect(sent(h, "upgrade")).toHaveLength(5);
  });

  it("counts a node that went back to DOWNLOADING after a later phase as downloading", () => {
    const h = start(fleet(20), { ...WIDE, maxDownloads: 1 });
    tick(h);
    const [a] = sent(h, "upgrade") as [string];
    report(h, a, "VERIFYING");
    advance(h, 1000);
    const [, b] = sent(h, "upgrade") as [string, string];
    report(h, a, "DOWNLOADING");
    report(h, b, "VERIFYING");
    advance(h, 1000);
    expect(sent(h, "upgrade")).toHaveLength(2);
  });

  it("counts a deferred node offered again as downloading, though its latest report is the DEFERRED", () => {
    const h = start(fleet(3), { ...WIDE, maxDownloads: 1, maxDeferMs: 60 * MIN });
    tick(h);
    const [first] = sent(h, "upgrade") as [string];
    report(h, first, "DEFERRED", "upgrade", { code: "deferred", message: "busy" });
    // Deferred, it frees its slot: the next node is offered.
    advance(h, 1000);
    const [, second] = sent(h, "upgrade") as [string, string];
    expect(second).not.toBe(first);
    report(h, second, "VERIFYING");
    // The second node's download ended: the slot goes back to the deferred node at its retry
    // time, and to no other node in the same decision.
    advance(h, 60_000);
    expect(inState(h, "offered")).toEqual([first]);
    expect(sent(h, "upgrade").filter((id) => id === first)).toHaveLength(2);
    expect(sent(h, "upgrade")).toHaveLength(3);
    advance(h, 1000);
    expect(sent(h, "upgrade")).toHaveLength(3);
  });

  it("without --max-downloads offers the whole batch at once", () => {
    const h = start(fleet(20), WIDE);
    tick(h);
    expect(sent(h, "upgrade")).toHaveLength(20);
  });

  it("never has more than N nodes offered and not past their download, over a whole campaign", () => {
    const h = start(fleet(30), { ...WIDE, maxDownloads: 4 });
    let step = 0;
    const downloading = () =>
      h.nodes.filter((n) => {
        if (n.state !== "offered" && n.state !== "applying") return false;
        const r = h.facts.get(n.nodeId)?.reports.find((x) => x.operationId.endsWith("/upgrade"));
        return r === undefined || r.phase === "ACCEPTED" || r.phase === "DOWNLOADING";
      }).length;
    tick(h);
    while (inState(h, "waiting").length > 0 && step++ < 200) {
      expect(downloading()).toBeLessThanOrEqual(4);
      const offered = h.nodes.filter((n) => n.state === "offered" || n.state === "applying");
      const one = offered[step % offered.length];
      if (one !== undefined) {
        const r = h.facts.get(one.nodeId)?.reports[0]?.phase;
        if (r === undefined) report(h, one.nodeId, "DOWNLOADING");
        else if (r === "DOWNLOADING") report(h, one.nodeId, "VERIFYING");
        else bringBack(h, [one.nodeId], NEW);
      }
      advance(h, 1000);
    }
    expect(inState(h, "waiting")).toEqual([]);
    expect(sent(h, "upgrade")).toHaveLength(30);
  });
});

describe("download budget in the spec", () => {
  it("is absent unless given, and 0 means none", () => {
    expect(resolveSpec({ targetVersion: NEW }).maxDownloads).toBeUndefined();
    expect(resolveSpec({ targetVersion: NEW, maxDownloads: 0 }).maxDownloads).toBeUndefined();
    expect(resolveSpec({ targetVersion: NEW, maxDownloads: 7 }).maxDownloads).toBe(7);
  });

  it.each([[-1], [1.5], [Number.NaN], [2_000_000]])("refuses max downloads %s", (value) => {
    const spec = { ...resolveSpec({ targetVersion: NEW }), maxDownloads: value };
    const problems = validateSpec(spec);
    expect(problems.map((p) => p.field)).toContain("max_downloads");
  });
});
