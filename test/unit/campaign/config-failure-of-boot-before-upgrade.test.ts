/**
 * A config failure of the boot a node had before its upgrade is not the target's. A deferred
 * node whose Agent took a later delivery and says Hello on the target is put back `offered`
 * with no offer boot (`resumeTakenDelivery`, deferral.ts); a failed ConfigStatus its previous
 * boot (still on 1.0.0) sent, first seen in the same decision as that Hello, is stamped at the
 * resume's offer time and names another boot than the (absent) offer boot: it must not fail
 * the node `config_apply_failed`.
 */
import { describe, expect, it } from "vitest";
import { CAP_CONFIG } from "../../../control/campaign/model.js";
import { advance, fleet, NEW, nodeOf, reboot, report, start, tick } from "./harness.js";

const A = "node-000";

describe("a deferred node back on the target", () => {
  it("is not failed config_apply_failed by a ConfigStatus of the boot before its upgrade", () => {
    const h = start(fleet(2, { capabilities: () => ["upgrade.v1", CAP_CONFIG] }), {
      batches: [{ percent: 100, minDurationMs: 60_000 }],
      failureThresholdPercent: 50,
      disruptionBudgetPercent: 100,
      maxDeferMs: 3_600_000,
      configGraceMs: 120_000,
    });
    tick(h);
    report(h, A, "DEFERRED", "upgrade", { code: "deferred", message: "lock held" });
    tick(h);
    expect(nodeOf(h, A).state).toBe("waiting");
    advance(h, 5000);
    // Still on 1.0.0 (boot boot-0-0), A's configuration check fails; then it takes the second
    // delivery, restarts and says Hello on 2.0.0. The leader sees both in one decision.
    const oldBoot = h.facts.get(A)?.bootId;
    const f = h.facts.get(A);
    h.facts.set(A, {
      ...(f as NonNullable<typeof f>),
      configFailures: [{ at: h.now, bootId: oldBoot, message: "old config broken on 1.0.0" }],
    });
    reboot(h, A, NEW);
    tick(h);
    expect(nodeOf(h, A).state).toBe("verifying");
  });

  it("(holds) an offered node: the old boot's ConfigStatus seen with its Hello on the target is ignored", () => {
    const h = start(fleet(2, { capabilities: () => ["upgrade.v1", CAP_CONFIG] }), {
      batches: [{ percent: 100, minDurationMs: 60_000 }],
      failureThresholdPercent: 50,
      disruptionBudgetPercent: 100,
      configGraceMs: 120_000,
    });
    tick(h);
    report(h, A, "RESTARTING");
    tick(h);
    advance(h, 5000);
    const oldBoot = h.facts.get(A)?.bootId;
    const f = h.facts.get(A);
    h.facts.set(A, {
      ...(f as NonNullable<typeof f>),
      configFailures: [{ at: h.now, bootId: oldBoot, message: "old config broken on 1.0.0" }],
    });
    reboot(h, A, NEW);
    tick(h);
    expect(nodeOf(h, A).state).toBe("verifying");
  });
});
