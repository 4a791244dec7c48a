/**
 * Engine review R03: an agent whose report disagrees with what it runs. A node of a breached batch is sent the
 * rollback; its agent reports REINSTATED on the rollback, but its stream (a new boot) says it
 * still runs the target. The engine takes the report alone: the node is `rolled_back` and the
 * campaign ends `rolled_back` — "every node back on its previous version" — while the node's
 * latest Hello, after the report, is on the target. SPEC §4: rolled_back "once each is
 * confirmed back on its previous version"; docs/campaign-engine.md O1 (a campaign that says
 * rolled_back has every node of the breached batch running the version it ran before).
 */
import { describe, expect, it } from "vitest";
import { advance, fleet, NEW, nodeOf, reboot, report, start, tick } from "./harness.js";

const A = "node-000";
const B = "node-001";

describe("rollback verdict from a report that a newer Hello contradicts", () => {
  it("does not call a node rolled back while its newer Hello says it runs the target", () => {
    const h = start(fleet(2), {
      batches: [{ percent: 100, minDurationMs: 0 }],
      failureThresholdPercent: 0,
      disruptionBudgetPercent: 100,
    });
    tick(h);
    // A comes back on the target; B fails: the batch breaches and rolls back.
    report(h, A, "RESTARTING");
    reboot(h, A, NEW);
    tick(h);
    expect(nodeOf(h, A).state).toBe("verifying");
    advance(h, 1000);
    report(h, B, "FAILED", "upgrade", { code: "apply_failed", message: "disk full" });
    tick(h);
    expect(h.campaign.phase).toBe("rolling_back");
    expect(nodeOf(h, A).state).toBe("rolling_back");
    // A's agent says REINSTATED, and then says Hello from a new boot on the target.
    advance(h, 1000);
    report(h, A, "REINSTATED", "rollback");
    reboot(h, A, NEW);
    tick(h);
    advance(h, 1000);
    tick(h);
    expect(nodeOf(h, A).state).not.toBe("rolled_back");
    expect(h.facts.get(A)?.agentVersion).toBe(NEW);
    expect(h.campaign.phase).not.toBe("rolled_back");
  });
});
