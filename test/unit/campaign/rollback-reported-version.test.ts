/**
 * A rollback reaches every final node whose latest Hello is on the target, whatever its state
 * and code say: a node that reported FAILED and then came back on the target with a new boot
 * runs the bad release, and a rollback that skips it would end `rolled_back` with it still on it.
 */
import { describe, expect, it } from "vitest";
import type { CampaignSpecInput } from "../../../control/campaign/index.js";
import type { Harness } from "./harness.js";
import {
  advance,
  batchIds,
  fleet,
  MIN,
  NEW,
  nodeOf,
  OLD,
  reboot,
  report,
  sent,
  start,
  tick,
} from "./harness.js";

/** 20 nodes in one batch of 30 minutes; more than 5 % failed (2 of 20) breaches it. */
const oneBatch: Partial<CampaignSpecInput> = {
  batches: [{ percent: 100, minDurationMs: 30 * MIN }],
  failureThresholdPercent: 5,
  disruptionBudgetPercent: 100,
};

/**
 * The first node answers its upgrade with `said` and then says Hello on the target with a new
 * boot (at 2 min); a second node refuses at 3 min: the batch breaches and rolls back.
 */
function failedThenOnTarget(said: {
  readonly phase: "FAILED" | "REFUSED";
  readonly code?: string;
}) {
  const h = start(fleet(20), oneBatch);
  tick(h);
  const [bad, refuser, ...rest] = batchIds(h, 0) as [string, string, ...string[]];
  h.now = MIN;
  report(h, bad, said.phase, "upgrade", { code: said.code ?? "" });
  tick(h);
  expect(nodeOf(h, bad).state).toBe("failed");
  h.now = 2 * MIN;
  reboot(h, bad, NEW);
  tick(h);
  expect(h.campaign.phase).toBe("running");
  h.now = 3 * MIN;
  report(h, refuser, "REFUSED");
  tick(h);
  expect(h.campaign.phase).toBe("rolling_back");
  return { h, bad, rest };
}

/** Every node told to roll back as it moved to rolling_back reinstates its previous release. */
function othersReinstate(h: Harness, rest: readonly string[]): void {
  for (const id of rest) report(h, id, "REINSTATED", "rollback");
}

describe("a failed node whose latest Hello is on the target, when its batch rolls back", () => {
  it("is sent the rollback after FAILED apply_failed, its state and code kept", () => {
    const { h, bad } = failedThenOnTarget({ phase: "FAILED" });
    expect(sent(h, "rollback")).toContain(bad);
    expect(nodeOf(h, bad)).toMatchObject({ state: "failed", code: "apply_failed" });
    expect(h.actions.find((a) => a.kind === "rollback" && a.nodeId === bad)).toMatchObject({
      version: OLD,
    });
  });

  it("is sent the rollback after FAILED health_check_failed", () => {
    const { h, bad } = failedThenOnTarget({ phase: "FAILED", code: "health_check_failed" });
    expect(nodeOf(h, bad).code).toBe("health_check_failed");
    expect(sent(h, "rollback")).toContain(bad);
  });

  it("holds the rollback's end until it is back: not rolled_back while it runs the target", () => {
    const { h, bad, rest } = failedThenOnTarget({ phase: "FAILED" });
    othersReinstate(h, rest);
    advance(h, MIN);
    expect(h.campaign.phase).toBe("rolling_back");
    h.now += MIN;
    reboot(h, bad, OLD);
    tick(h);
    expect(h.campaign).toMatchObject({ phase: "rolled_back", code: "batch_failed" });
    expect(nodeOf(h, bad).rollbackResult).toBe("rolled_back");
  });

  it("ends failed rollback_unconfirmed when it stays on the target past the rollback deadline", () => {
    const { h, bad, rest } = failedThenOnTarget({ phase: "FAILED" });
    othersReinstate(h, rest);
    advance(h, 10 * MIN);
    expect(h.campaign).toMatchObject({ phase: "failed", code: "rollback_unconfirmed" });
    expect(h.campaign.message).toContain(bad);
  });

  it("is sent the rollback when its Hello on the target comes after the rollback started", () => {
    const h = start(fleet(20), oneBatch);
    tick(h);
    const [bad, refuser, ...rest] = batchIds(h, 0) as [string, string, ...string[]];
    h.now = MIN;
    report(h, bad, "FAILED");
    report(h, refuser, "REFUSED");
    tick(h);
    expect(h.campaign.phase).toBe("rolling_back");
    expect(sent(h, "rollback")).not.toContain(bad);
    othersReinstate(h, rest);
    h.now = 2 * MIN;
    reboot(h, bad, NEW);
    tick(h);
    expect(sent(h, "rollback")).toContain(bad);
    expect(h.campaign.phase).toBe("rolling_back");
  });

  it("is not sent a rollback when its latest Hello is on its previous version", () => {
    const h = start(fleet(20), oneBatch);
    tick(h);
    const [bad, refuser, ...rest] = batchIds(h, 0) as [string, string, ...string[]];
    h.now = MIN;
    report(h, bad, "FAILED");
    reboot(h, bad, OLD);
    report(h, refuser, "REFUSED");
    tick(h);
    expect(sent(h, "rollback")).not.toContain(bad);
    othersReinstate(h, rest);
    advance(h, MIN);
    expect(h.campaign.phase).toBe("rolled_back");
  });
});
