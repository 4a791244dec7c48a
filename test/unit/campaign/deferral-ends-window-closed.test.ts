/**
 * A node still deferring in the last batch holds it until its max defer, then ends `skipped
 * deferred`, whether or not a maintenance window is open then: skipping offers nothing, and
 * waiting for the next window would hold the campaign (and every node of its current batch, busy
 * for other starts) for up to a window's period.
 */
import { describe, expect, it } from "vitest";
import { fleet, MIN, NEW, nodeOf, reboot, report, start, tick } from "./harness.js";
import { windowsOf } from "./windows-of.js";

const busy = { code: "deferred", message: "maintenance lock held" };
const HOUR = 60 * MIN;

describe("a node whose max defer ends while the window is closed", () => {
  it("is skipped deferred at its max defer, and the campaign completes without waiting for the next window", () => {
    // Daily window 00:00-01:00 UTC (the harness starts at 1970-01-01 00:00 UTC).
    const h = start(fleet(4), {
      batches: [{ percent: 100, minDurationMs: 10 * MIN }],
      failureThresholdPercent: 0,
      disruptionBudgetPercent: 100,
      configGraceMs: 0,
      maxDeferMs: 70 * MIN,
      windows: windowsOf("00:00-01:00"),
    });
    const busyNode = "node-000";
    for (h.now = 0; h.now <= 26 * HOUR; h.now += MIN) {
      tick(h);
      for (const n of h.nodes) {
        if (n.state !== "offered") continue;
        // Busy throughout: first deferral at 00:00, its max defer (70 min) ends at 01:10,
        // ten minutes after the window closed.
        if (n.nodeId === busyNode) {
          report(h, n.nodeId, "DEFERRED", "upgrade", busy);
        } else {
          report(h, n.nodeId, "RESTARTING");
          reboot(h, n.nodeId, NEW);
        }
      }
      tick(h);
      if (h.campaign.finishedAt !== undefined) break;
    }
    expect(nodeOf(h, busyNode)).toMatchObject({ state: "skipped", code: "deferred" });
    // Expected at its max defer (01:10) or the next decision after it; not the next day's window.
    expect(h.campaign.phase).toBe("completed");
    expect(h.campaign.finishedAt).toBeLessThan(2 * HOUR);
  });
});
