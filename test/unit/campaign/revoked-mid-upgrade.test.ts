/**
 * A node an administrator revokes while it upgrades (`agentctl node revoke`: its credential
 * cleared, its stream cut, no way back before `node reset`) is not a release failure: its
 * outcome can no longer be known, and an operator's act must not breach a batch or roll back a
 * good release. It ends skipped `node_revoked`, out of the batch's threshold and denominator.
 */
import { describe, expect, it } from "vitest";
import type { CampaignSpecInput } from "../../../control/campaign/index.js";
import type { Harness } from "./harness.js";
import {
  advance,
  batchIds,
  bringBack,
  fleet,
  MIN,
  nodeOf,
  report,
  sent,
  start,
  tick,
} from "./harness.js";

/** Ten nodes in one 30-minute batch at threshold 0 %: any failure breaches it. */
const strict: Partial<CampaignSpecInput> = {
  batches: [{ percent: 100, minDurationMs: 30 * MIN }],
  failureThresholdPercent: 0,
  disruptionBudgetPercent: 100,
  reconnectTimeoutMs: 10 * MIN,
};

/** The node is revoked: its registry row says so and its stream is gone for good. */
function revoke(h: Harness, nodeId: string): void {
  const f = h.facts.get(nodeId);
  if (f === undefined) throw new Error(`no facts for ${nodeId}`);
  h.facts.set(nodeId, { ...f, revoked: true, online: false, offline: true });
}

/** Every node offered at 0; all but the first back on the target at 30 s. */
function offeredAll(): { h: Harness; ids: string[] } {
  const h = start(fleet(10), strict);
  tick(h);
  const ids = batchIds(h, 0);
  expect(sent(h, "upgrade")).toHaveLength(10);
  h.now = 30_000;
  bringBack(h, ids.slice(1));
  tick(h);
  return { h, ids };
}

/** At threshold 0 nothing breached: nothing failed, nothing rolled back. */
function notBreached(h: Harness): void {
  expect(h.campaign.phase).toBe("running");
  expect(h.campaign.batches[0]?.state).toBe("running");
  expect(h.nodes.filter((n) => n.state === "failed" || n.state === "timed_out")).toEqual([]);
  expect(sent(h, "rollback")).toEqual([]);
}

describe("a node revoked while it upgrades", () => {
  it("offered: skipped node_revoked at once, not a failure, and the batch does not breach", () => {
    const { h, ids } = offeredAll();
    h.now = MIN;
    revoke(h, ids[0]!);
    tick(h);
    expect(nodeOf(h, ids[0]!)).toMatchObject({ state: "skipped", code: "node_revoked" });
    notBreached(h);
  });

  it("restarting, past its reconnect deadline: skipped node_revoked, not reconnect_timeout", () => {
    const { h, ids } = offeredAll();
    h.now = MIN;
    report(h, ids[0]!, "RESTARTING");
    tick(h);
    revoke(h, ids[0]!);
    advance(h, 10 * MIN);
    expect(nodeOf(h, ids[0]!)).toMatchObject({ state: "skipped", code: "node_revoked" });
    notBreached(h);
  });

  it("verifying, then away past the reconnect timeout: skipped node_revoked, not lost_after_upgrade", () => {
    const { h, ids } = offeredAll();
    h.now = MIN;
    bringBack(h, [ids[0]!]);
    tick(h);
    expect(nodeOf(h, ids[0]!).state).toBe("verifying");
    h.now = 2 * MIN;
    revoke(h, ids[0]!);
    tick(h);
    advance(h, 10 * MIN);
    expect(nodeOf(h, ids[0]!)).toMatchObject({ state: "skipped", code: "node_revoked" });
    notBreached(h);
  });

  it("leaves the batch to pass on its other nodes, confirmed without it", () => {
    const { h, ids } = offeredAll();
    h.now = MIN;
    revoke(h, ids[0]!);
    tick(h);
    advance(h, 30 * MIN);
    expect(h.campaign.phase).toBe("completed");
    expect(sent(h, "confirm").sort()).toEqual(ids.slice(1).sort());
  });

  it("still fails on what its agent reported before: FAILED then revoked is apply_failed", () => {
    const { h, ids } = offeredAll();
    h.now = MIN;
    report(h, ids[0]!, "FAILED");
    revoke(h, ids[0]!);
    tick(h);
    expect(nodeOf(h, ids[0]!)).toMatchObject({ state: "failed", code: "apply_failed" });
    expect(h.campaign.phase).toBe("rolling_back");
  });
});
