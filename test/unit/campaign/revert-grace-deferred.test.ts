/**
 * A node back on its old version after announcing its restart cannot escape its failure by
 * answering DEFERRED during the revert-report grace.
 */
import { describe, expect, it } from "vitest";
import { MIN, nodeOf, OLD, reboot, report, tick } from "./harness.js";
import { G, ID, one, seenBackTogether } from "./revert-grace-fixtures.js";

/*
 * DEFERRED means "not now, nothing applied" (DF3: "a node skipped `deferred` never applied the
 * upgrade"). A node that announced its restart applied it, so a DEFERRED answer from it is not
 * honoured: it stays restarting and is judged from its boot. (Honoured, it went back to
 * `waiting`, was re-offered and finally skipped `deferred`, and a batch with a 0 % threshold
 * passed with a node that had come back reverted.)
 */
describe("a node back on its old version after announcing its restart cannot escape its failure by answering DEFERRED", () => {
  const deferred = { code: "deferred", message: "busy" } as const;

  it.each([
    ["in one decision", true],
    ["in separate decisions", false],
  ])(
    "is failed at the end of the grace, not sent back to waiting (report and Hello seen %s)",
    (_, together) => {
      const h = one({ failureThresholdPercent: 0 });
      report(h, ID, "RESTARTING");
      if (!together) tick(h);
      h.now = 1_000;
      reboot(h, ID, OLD);
      tick(h);
      expect(nodeOf(h, ID)).toMatchObject({ state: "restarting", revertSeenAt: 1_000 });
      h.now = 2_000;
      report(h, ID, "DEFERRED", "upgrade", deferred);
      tick(h);
      h.now = 1_000 + G;
      tick(h);
      expect(nodeOf(h, ID).state).toBe("failed");
    },
  );

  it("does not let a 0 % threshold batch pass and the campaign complete with the node skipped `deferred`", () => {
    const h = one({ failureThresholdPercent: 0, maxDeferMs: 4 * MIN });
    h.now = 1_000;
    seenBackTogether(h);
    h.now = 2_000;
    report(h, ID, "DEFERRED", "upgrade", deferred);
    tick(h);
    // The agent answers DEFERRED to every re-offer until its max defer has passed.
    for (let i = 0; i < 40 && h.campaign.finishedAt === undefined; i++) {
      h.now += 30_000;
      const before = nodeOf(h, ID).state;
      tick(h);
      if (nodeOf(h, ID).state === "offered" && before !== "offered") {
        h.now += 100;
        report(h, ID, "DEFERRED", "upgrade", deferred);
        tick(h);
      }
    }
    // Honoured, the DEFERRED answers ended in skipped/deferred (DF3 broken), the batch passed
    // and the campaign completed.
    expect(nodeOf(h, ID)).not.toMatchObject({ state: "skipped", code: "deferred" });
    expect(h.campaign.batches[0]!.state).not.toBe("passed");
    expect(h.campaign.phase).not.toBe("completed");
  });

  it("a DEFERRED inside the grace costs the health-check report that follows nothing", () => {
    // A restarting node never goes back to waiting (the only way back), so no revert sighting
    // of an earlier offer can outlive it; the report that follows still gets its grace.
    const h = one();
    h.now = 1_000;
    seenBackTogether(h);
    h.now = 2_000;
    report(h, ID, "DEFERRED", "upgrade", deferred);
    tick(h);
    expect(nodeOf(h, ID)).toMatchObject({ state: "restarting", revertSeenAt: 1_000 });
    h.now = 3_000;
    report(h, ID, "FAILED", "upgrade", { code: "health_check_failed", message: "hc failed" });
    tick(h);
    expect(nodeOf(h, ID)).toMatchObject({ state: "failed", code: "health_check_failed" });
  });
});
