/**
 * Judging one node: when a node back on the target is still watched, and what a node offline
 * at the deadline becomes.
 */
import { describe, expect, it } from "vitest";
import type { CampaignSpecInput } from "../../../control/campaign/index.js";
import type { Harness } from "./harness.js";
import {
  advance,
  batchIds,
  bringBack,
  configFails,
  fleet,
  goOffline,
  MIN,
  NEW,
  nodeOf,
  OLD,
  reboot,
  report,
  start,
  tick,
} from "./harness.js";
import { ID, oneSlowBatch, reasons } from "./judge-node-fixture.js";

describe("a node back on the target", () => {
  /** Back on the target at 1 minute, on a config.v1 node (grace until 2 minutes). */
  function back(spec: Partial<CampaignSpecInput> = oneSlowBatch, count = 1): Harness {
    const h = start(fleet(count, { capabilities: () => ["upgrade.v1", "config.v1"] }), spec);
    tick(h);
    h.now = MIN;
    reboot(h, ID, NEW);
    tick(h);
    expect(nodeOf(h, ID)).toMatchObject({ state: "verifying", graceEndsAt: 2 * MIN });
    return h;
  }

  function configFailure(h: Harness, at: number, bootId: string): void {
    const f = h.facts.get(ID)!;
    h.facts.set(ID, {
      ...f,
      configFailures: [...f.configFailures, { at, bootId, message: "bad config" }],
    });
  }

  it("a config failure records its message and says so", () => {
    const h = back();
    configFails(h, ID);
    tick(h);
    expect(nodeOf(h, ID)).toMatchObject({
      state: "failed",
      code: "config_apply_failed",
      message: `configuration failed on ${NEW}: bad config`,
    });
    expect(reasons(h)).toContain(`node ${ID}: verifying → failed: config failed`);
  });

  it("a config failure from another boot before the offer is not this upgrade's", () => {
    const h = back();
    h.nodes = h.nodes.map((n) => (n.nodeId === ID ? { ...n, offeredAt: 10 } : n));
    configFailure(h, 9, "an-earlier-boot");
    tick(h);
    expect(nodeOf(h, ID).state).toBe("verifying");
    configFailure(h, 10, "an-earlier-boot");
    tick(h);
    expect(nodeOf(h, ID)).toMatchObject({ state: "failed", code: "config_apply_failed" });
  });

  it("is still within its grace one millisecond before it ends", () => {
    const h = back({ ...oneSlowBatch, failureThresholdPercent: 0, onBreach: "stop" }, 2);
    const other = batchIds(h, 0).find((id) => id !== ID)!;
    report(h, other, "REFUSED");
    tick(h);
    expect(h.campaign.batches[0]?.state).toBe("breached");
    h.now = 2 * MIN - 1;
    configFails(h, ID);
    tick(h);
    expect(nodeOf(h, ID)).toMatchObject({ state: "failed", code: "config_apply_failed" });
  });

  it("a new boot on another version after reaching the target is a revert, recording the version", () => {
    const h = back();
    advance(h, MIN);
    reboot(h, ID, OLD);
    tick(h);
    expect(nodeOf(h, ID)).toMatchObject({
      state: "failed",
      code: "reverted",
      version: OLD,
      message: `restarted on ${OLD} after reaching ${NEW}`,
    });
    expect(reasons(h)).toContain(`node ${ID}: verifying → failed: reverted after success`);
  });

  it("a revert to a version it does not say is named so", () => {
    const h = back();
    reboot(h, ID, OLD);
    h.facts.set(ID, { ...h.facts.get(ID)!, agentVersion: undefined });
    tick(h);
    expect(nodeOf(h, ID)).toMatchObject({
      state: "failed",
      code: "reverted",
      version: undefined,
      message: `restarted on an unknown version after reaching ${NEW}`,
    });
  });

  it("only a new boot is a revert: facts naming the boot it came back on or its boot before the upgrade are not, nor facts without a boot", () => {
    const h = back();
    const f = h.facts.get(ID)!;
    for (const bootId of [f.bootId, "boot-0-0", undefined]) {
      h.facts.set(ID, { ...f, bootId, agentVersion: OLD });
      const d = tick(h);
      expect(nodeOf(h, ID).state).toBe("verifying");
      expect(d.changes.nodes).toEqual([]);
    }
  });

  it("a node of which nothing is known any more is counted away (offline), and stays verifying while its batch runs", () => {
    const h = back();
    h.facts.delete(ID);
    const d = advance(h, 5 * MIN);
    expect(nodeOf(h, ID)).toMatchObject({ state: "verifying", awaySince: 6 * MIN });
    expect(d.changes.nodes.map((n) => n.nodeId)).toEqual([ID]);
    expect(advance(h, MIN).changes.nodes).toEqual([]);
  });

  it("a new boot on the target again is not a revert", () => {
    const h = back();
    reboot(h, ID, NEW);
    const d = tick(h);
    expect(nodeOf(h, ID).state).toBe("verifying");
    expect(d.changes.nodes).toEqual([]);
  });

  it("is still watched past its grace while its batch is breached and the campaign paused", () => {
    const h = back({ ...oneSlowBatch, failureThresholdPercent: 0, onBreach: "pause" }, 2);
    advance(h, 2 * MIN);
    const other = batchIds(h, 0).find((id) => id !== ID)!;
    report(h, other, "REFUSED");
    tick(h);
    expect(h.campaign.phase).toBe("paused");
    expect(h.campaign.batches[0]?.state).toBe("breached");
    configFails(h, ID);
    tick(h);
    expect(nodeOf(h, ID)).toMatchObject({ state: "failed", code: "config_apply_failed" });
  });

  it("past its grace once its batch can no longer pass, it succeeds unconfirmed and says why", () => {
    const h = back({ ...oneSlowBatch, failureThresholdPercent: 0, onBreach: "stop" }, 2);
    const other = batchIds(h, 0).find((id) => id !== ID)!;
    report(h, other, "REFUSED");
    tick(h);
    expect(nodeOf(h, ID).state).toBe("verifying");
    advance(h, MIN);
    expect(nodeOf(h, ID)).toMatchObject({
      state: "succeeded",
      message: `on ${NEW}; the campaign ended before its batch passed, not confirmed`,
    });
    expect(reasons(h)).toContain(
      `node ${ID}: verifying → succeeded: settled after the campaign ended`,
    );
    expect(h.actions.filter((a) => a.kind === "confirm")).toEqual([]);
  });

  it("a config failure once its batch can no longer pass and its grace is over is not judged", () => {
    const h = back({ ...oneSlowBatch, failureThresholdPercent: 0, onBreach: "stop" }, 2);
    const other = batchIds(h, 0).find((id) => id !== ID)!;
    report(h, other, "REFUSED");
    tick(h);
    h.now = 2 * MIN;
    configFails(h, ID);
    tick(h);
    expect(nodeOf(h, ID).state).toBe("succeeded");
  });
});

describe("nodes offline at the deadline", () => {
  it("a node offline while applying times out; one offline after announcing its restart fails", () => {
    const h = start(fleet(2), oneSlowBatch);
    tick(h);
    const [a, b] = batchIds(h, 0) as [string, string];
    report(h, a, "APPLYING");
    report(h, b, "RESTARTING");
    goOffline(h, a);
    goOffline(h, b);
    tick(h);
    advance(h, 10 * MIN);
    expect(nodeOf(h, a)).toMatchObject({ state: "timed_out", code: "reconnect_timeout" });
    expect(nodeOf(h, b)).toMatchObject({ state: "failed", code: "reconnect_timeout" });
    bringBack(h, [a, b]);
    const d = tick(h);
    expect(d.changes.nodes).toEqual([]);
  });
});
