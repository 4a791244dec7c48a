/**
 * A sceptical look at the revert-report grace when one decision sees a node's RESTARTING report
 * (from an earlier boot) and its next boot's Hello on a version other than the target: can an
 * Agent stretch its verdict, does the reconnect deadline still bound it, do incremental and full
 * judging still agree, does anything pass or finish while the node waits?
 */
import { describe, expect, it } from "vitest";
import type { CampaignNode } from "../../../control/campaign/index.js";
import { isActive } from "../../../control/campaign/index.js";
import {
  bringBack,
  fleet,
  type Harness,
  MIN,
  NEW,
  nodeOf,
  OLD,
  reboot,
  report,
  start,
  tick,
} from "./harness.js";
import { G, ID, one, seenBackTogether, stampReport } from "./revert-grace-fixtures.js";

/** Ticks every `stepMs` until the node is final or `untilMs` passes; returns when it became final. */
function finalAt(h: Harness, stepMs: number, untilMs: number): number | undefined {
  while (h.now <= untilMs) {
    tick(h);
    if (!isActive(nodeOf(h, ID).state)) return h.now;
    h.now += stepMs;
  }
  return undefined;
}

describe("attacks on the revert-report grace (expected to hold)", () => {
  it("an agent that restarts on its old version again and again, announcing each restart, is failed within the grace of its first return", () => {
    const h = one();
    seenBackTogether(h);
    const first = h.now;
    expect(nodeOf(h, ID)).toMatchObject({ state: "restarting", revertSeenAt: first });
    // Every second: a RESTARTING report from the boot before, then a fresh Hello on OLD,
    // both in one decision.
    for (let i = 0; i < 20 && isActive(nodeOf(h, ID).state); i++) {
      h.now += 1_000;
      seenBackTogether(h);
    }
    expect(nodeOf(h, ID)).toMatchObject({ state: "failed", code: "reverted" });
    expect(nodeOf(h, ID).finishedAt).toBeLessThanOrEqual(first + G);
  });

  it("a RESTARTING report with no boot id, seen with a Hello on the old version, gets only the grace", () => {
    const h = one();
    h.now = 1_000;
    report(h, ID, "RESTARTING");
    stampReport(h, ID, undefined);
    reboot(h, ID, OLD);
    const back = tick(h);
    expect(nodeOf(h, ID)).toMatchObject({ state: "restarting", revertSeenAt: 1_000 });
    expect(back.wakeAt).toBe(1_000 + G);
    expect(finalAt(h, 500, 1_000 + 10 * MIN)).toBe(1_000 + G);
    expect(nodeOf(h, ID)).toMatchObject({ state: "failed", code: "reverted", version: OLD });
  });

  it("a RESTARTING report stamped with the NEW boot (not an earlier one) does not earn the grace while applying", () => {
    const h = one();
    report(h, ID, "APPLYING");
    tick(h);
    expect(nodeOf(h, ID).state).toBe("applying");
    h.now = 2_000;
    reboot(h, ID, OLD);
    report(h, ID, "RESTARTING"); // stamped with the new boot id
    tick(h);
    expect(nodeOf(h, ID)).toMatchObject({ state: "failed", code: "reverted", version: OLD });
  });

  it("an agent back on the TARGET in the same decision as its RESTARTING report is verifying at once", () => {
    const h = start(fleet(1, { capabilities: () => ["upgrade.v1", "config.v1"] }), {
      batches: [{ percent: 100, minDurationMs: 0 }],
      failureThresholdPercent: 100,
      configGraceMs: MIN,
    });
    tick(h);
    h.now = 3_000;
    report(h, ID, "RESTARTING");
    bringBack(h, [ID], NEW);
    tick(h);
    expect(nodeOf(h, ID)).toMatchObject({ state: "verifying", version: NEW, backAt: 3_000 });
    expect(nodeOf(h, ID).revertSeenAt).toBeUndefined();
  });

  it("the reconnect deadline plus the grace bounds a node seen together just before its deadline", () => {
    const h = one({ reconnectTimeoutMs: 2 * MIN });
    const deadline = nodeOf(h, ID).reconnectDeadline!;
    expect(deadline).toBe(2 * MIN);
    h.now = deadline - 1;
    seenBackTogether(h);
    expect(nodeOf(h, ID).state).toBe("restarting");
    expect(finalAt(h, 1_000, deadline + 10 * MIN)).toBeLessThanOrEqual(deadline - 1 + G);
    expect(nodeOf(h, ID)).toMatchObject({ state: "failed", code: "reverted" });
  });

  it("the batch does not pass, and the campaign does not complete, while the node waits", () => {
    const h = one();
    h.now = 1_000;
    report(h, ID, "RESTARTING");
    reboot(h, ID, OLD);
    for (let t = 1_000; t < 1_000 + G; t += 1_000) {
      h.now = t;
      tick(h);
      expect(nodeOf(h, ID).state).toBe("restarting");
      expect(h.campaign.phase).toBe("running");
      expect(h.campaign.batches[0]!.state).toBe("running");
      expect(h.actions.filter((a) => a.kind === "confirm")).toEqual([]);
    }
    h.now = 1_000 + G;
    tick(h);
    expect(nodeOf(h, ID)).toMatchObject({ state: "failed", code: "reverted" });
    // Only now (threshold 100 %) may the batch pass and the campaign complete.
    expect(h.campaign.finishedAt).toBe(1_000 + G);
  });

  it("a threshold of 0 breaches only on the verdict, and the verdict comes within the grace", () => {
    const h = start(fleet(2), {
      batches: [{ percent: 100, minDurationMs: 0 }],
      failureThresholdPercent: 0,
      concurrency: 2,
      disruptionBudgetPercent: 100,
      onBreach: "pause",
    });
    tick(h);
    const other = "node-001";
    expect(nodeOf(h, other).state).toBe("offered");
    h.now = 1_000;
    report(h, ID, "RESTARTING");
    reboot(h, ID, OLD);
    bringBack(h, [other], NEW);
    tick(h);
    expect(nodeOf(h, other).state).toBe("verifying");
    expect(nodeOf(h, ID).state).toBe("restarting");
    h.now = 1_000 + G;
    tick(h);
    expect(nodeOf(h, ID)).toMatchObject({ state: "failed", code: "reverted" });
    expect(h.campaign.phase).toBe("paused");
    expect(h.campaign.batches[0]!.state).toBe("breached");
  });

  it("a paused campaign still judges the waiting node at the end of its grace", () => {
    const h = one();
    h.now = 1_000;
    report(h, ID, "RESTARTING");
    reboot(h, ID, OLD);
    tick(h, [{ kind: "pause" }]);
    expect(h.campaign.phase).toBe("paused");
    expect(nodeOf(h, ID).state).toBe("restarting");
    h.now = 1_000 + G;
    tick(h);
    expect(nodeOf(h, ID)).toMatchObject({ state: "failed", code: "reverted" });
  });

  it("an abort with rollback while the node waits sends it the rollback, and its REINSTATED ends it rolled_back", () => {
    const h = one();
    h.now = 1_000;
    seenBackTogether(h);
    h.now = 2_000;
    tick(h, [{ kind: "abort", rollback: true }]);
    expect(nodeOf(h, ID).state).toBe("rolling_back");
    expect(h.actions.filter((a) => a.kind === "rollback").map((a) => a.nodeId)).toEqual([ID]);
    h.now = 3_000;
    report(h, ID, "REINSTATED", "rollback");
    tick(h);
    expect(nodeOf(h, ID).state).toBe("rolled_back");
    expect(h.campaign.finishedAt).toBe(3_000);
  });
});

/** Runs `script` on a fresh one-node campaign; returns the final node and the time it went final. */
type Script = (h: Harness) => void;

describe("one decision seeing both ≡ two decisions seeing them one after the other", () => {
  const variants: { name: string; before: Script }[] = [
    { name: "from offered", before: () => {} },
    {
      name: "from applying",
      before: (h) => {
        report(h, ID, "APPLYING");
        tick(h);
        expect(nodeOf(h, ID).state).toBe("applying");
      },
    },
  ];
  const afters: { name: string; after: Script }[] = [
    { name: "no report follows", after: () => {} },
    {
      name: "health_check_failed follows",
      after: (h) =>
        report(h, ID, "FAILED", "upgrade", { code: "health_check_failed", message: "hc" }),
    },
    { name: "a boot on the target follows", after: (h) => reboot(h, ID, NEW) },
  ];
  for (const v of variants) {
    for (const a of afters) {
      it(`${v.name}, then ${a.name}`, () => {
        const run = (together: boolean): CampaignNode => {
          const h = one();
          v.before(h);
          h.now = 10_000;
          report(h, ID, "RESTARTING");
          if (!together) tick(h);
          reboot(h, ID, OLD);
          tick(h);
          h.now = 10_000 + 2_000;
          a.after(h);
          tick(h);
          h.now = 10_000 + G;
          tick(h);
          h.now = 10_000 + G + 1;
          tick(h);
          return nodeOf(h, ID);
        };
        expect(run(true)).toEqual(run(false));
      });
    }
  }
});
