/**
 * When a decision asks to be run again (`wakeAt`): each deadline it takes, the ones it must not
 * take, and the time it must never return (now or earlier).
 */
import { describe, expect, it } from "vitest";
import {
  type CampaignSpecInput,
  decide,
  type GateResult,
} from "../../../control/campaign/index.js";
import type { Harness } from "./harness.js";
import {
  batchIds,
  bringBack,
  configFails,
  decideWith,
  fleet,
  MIN,
  NEW,
  nodeOf,
  reboot,
  report,
  setDisabled,
  start,
  tick,
} from "./harness.js";
import { windowsOf } from "./windows-of.js";

/** One batch of an hour that tolerates every failure, every node offerable at once. */
const hourBatch: Partial<CampaignSpecInput> = {
  batches: [{ percent: 100, minDurationMs: 60 * MIN }],
  failureThresholdPercent: 100,
  disruptionBudgetPercent: 100,
  configGraceMs: 0,
};

function offered(spec: Partial<CampaignSpecInput> = hourBatch, count = 1): Harness {
  const h = start(fleet(count, { capabilities: () => ["upgrade.v1", "config.v1"] }), spec);
  tick(h);
  return h;
}

describe("when a decision wakes", () => {
  it("at an offered node's reconnect deadline, before the batch's minimum", () => {
    const h = offered();
    expect(h.last?.wakeAt).toBe(10 * MIN);
  });

  it("at a verifying node's grace end, not at the reconnect deadline it no longer waits for", () => {
    const h = offered({ ...hourBatch, configGraceMs: 20 * MIN });
    h.now = MIN;
    reboot(h, "node-000", NEW);
    const d = tick(h);
    expect(d.wakeAt).toBe(21 * MIN);
  });

  it("never at now: a node back without a grace leaves the batch's minimum as the wake", () => {
    const h = offered();
    h.now = MIN;
    reboot(h, "node-000", NEW);
    const d = tick(h);
    expect(d.wakeAt).toBe(60 * MIN);
  });

  it("at a rolling-back node's deadline, judged no sooner than a reconnect timeout after the leader became ready", () => {
    const h = offered({ ...hourBatch, failureThresholdPercent: 0 }, 2);
    const [a] = batchIds(h, 0) as [string];
    h.now = MIN;
    report(h, a, "REFUSED");
    const d = tick(h);
    expect(h.campaign.phase).toBe("rolling_back");
    expect(d.wakeAt).toBe(11 * MIN);
    h.now = 2 * MIN;
    expect(tick(h, [], { readyAt: 5 * MIN }).wakeAt).toBe(15 * MIN);
  });

  it("not at the batch's minimum while the campaign is paused", () => {
    const h = offered();
    bringBack(h, ["node-000"]);
    tick(h);
    const d = tick(h, [{ kind: "pause" }]);
    expect(h.campaign.phase).toBe("paused");
    expect(d.wakeAt).toBeUndefined();
  });

  it("within an open window, at the end of the soak when that comes before the window closes", () => {
    const h = offered({
      ...hourBatch,
      batches: [{ percent: 100, minDurationMs: 0 }],
      soakMs: 10 * MIN,
      windows: windowsOf("00:00-02:00"),
    });
    h.now = MIN;
    bringBack(h, ["node-000"]);
    const d = tick(h);
    expect(h.campaign.batches[0]?.settledAt).toBe(MIN);
    expect(d.wakeAt).toBe(11 * MIN);
    h.now = 5 * MIN;
    expect(tick(h).wakeAt).toBe(11 * MIN);
  });

  it("within an open window, at the end of the minimum when that comes before the window closes", () => {
    const h = offered({
      ...hourBatch,
      batches: [{ percent: 100, minDurationMs: 30 * MIN }],
      windows: windowsOf("00:00-02:00"),
    });
    h.now = MIN;
    bringBack(h, ["node-000"]);
    expect(tick(h).wakeAt).toBe(30 * MIN);
  });

  it("while every window is closed, at the opening, not at the batch's minimum", () => {
    const h = offered({
      ...hourBatch,
      batches: [{ percent: 100, minDurationMs: 20 * MIN }],
      windows: windowsOf("01:00-02:00"),
    });
    expect(h.last?.actions).toEqual([]);
    expect(h.last?.wakeAt).toBe(60 * MIN);
  });

  it("at the batch's minimum moved on by the time it was paused", () => {
    const h = offered();
    h.now = MIN;
    bringBack(h, ["node-000"]);
    tick(h, [{ kind: "pause" }]);
    h.now = 6 * MIN;
    const d = tick(h, [{ kind: "resume" }]);
    expect(h.campaign.batches[0]?.pausedMs).toBe(5 * MIN);
    expect(d.wakeAt).toBe(65 * MIN);
  });

  it("at a rolling-back node's deadline, not at the grace end it had while verifying", () => {
    const h = offered(
      {
        ...hourBatch,
        configGraceMs: 20 * MIN,
        reconnectTimeoutMs: 10 * MIN,
        failureThresholdPercent: 0,
      },
      2,
    );
    const [a, b] = batchIds(h, 0) as [string, string];
    h.now = MIN;
    reboot(h, a, NEW);
    tick(h);
    expect(nodeOf(h, a).graceEndsAt).toBe(21 * MIN);
    report(h, b, "APPLYING");
    tick(h);
    h.now = 15 * MIN;
    reboot(h, b, NEW);
    configFails(h, b);
    const d = tick(h);
    expect(h.campaign.phase).toBe("rolling_back");
    expect(nodeOf(h, a)).toMatchObject({ state: "rolling_back", rollbackDeadline: 25 * MIN });
    expect(d.wakeAt).toBe(25 * MIN);
  });

  it("never once the campaign ended, though rollbacks it sent had later deadlines", () => {
    const h = offered({ ...hourBatch, failureThresholdPercent: 0 }, 2);
    const [a, b] = batchIds(h, 0) as [string, string];
    h.now = MIN;
    reboot(h, a, NEW);
    tick(h);
    configFails(h, a);
    tick(h);
    expect(nodeOf(h, a)).toMatchObject({ state: "failed", code: "config_apply_failed" });
    expect(h.campaign.phase).toBe("rolling_back");
    for (const id of [a, b]) report(h, id, "REINSTATED", "rollback");
    h.now = 2 * MIN;
    const d = tick(h);
    expect(h.campaign.phase).toBe("rolled_back");
    expect(d.wakeAt).toBeUndefined();
  });
});

describe("what a paused campaign still does", () => {
  it("settles a waiting node that was disabled, without offering anything", () => {
    const h = offered({ ...hourBatch, concurrency: 1 }, 3);
    const waiting = batchIds(h, 0)[2]!;
    tick(h, [{ kind: "pause" }]);
    setDisabled(h, waiting);
    const d = tick(h);
    expect(nodeOf(h, waiting)).toMatchObject({ state: "skipped", code: "node_disabled" });
    expect(d.actions).toEqual([]);
  });
});

describe("when a decision with an outside gate wakes", () => {
  const unreachable: GateResult = {
    batch: 0,
    gate: 0,
    status: "unreachable",
    at: 30_000,
    value: "",
    message: "unreachable",
    unreachableSince: 20_000,
  };
  /** Two nodes back at 10 s in one batch with a webhook gate (grace 1 minute). */
  function gated(): Harness {
    const h = start(fleet(2), {
      disruptionBudgetPercent: 100,
      configGraceMs: 0,
      gates: [{ kind: "webhook", url: "http://hook" }],
      gateGraceMs: MIN,
      batches: [{ percent: 100, minDurationMs: 0 }],
    });
    decideWith(h, []);
    h.now = 10_000;
    bringBack(h, batchIds(h, 0));
    decideWith(h, []);
    h.now = 30_000;
    return h;
  }

  it("at the end of an unreachable gate's grace while the campaign is paused", () => {
    const h = gated();
    const d = decide({
      campaign: h.campaign,
      nodes: h.nodes,
      facts: h.facts,
      now: h.now,
      target: h.target,
      gates: [unreachable],
      commands: [{ kind: "pause" }],
    });
    expect(d.changes.campaign?.phase).toBe("paused");
    expect(d.wakeAt).toBe(80_000);
  });

  it("not at that grace's end once the batch is rolling back", () => {
    const h = gated();
    const d = decide({
      campaign: h.campaign,
      nodes: h.nodes,
      facts: h.facts,
      now: h.now,
      target: h.target,
      gates: [unreachable],
      commands: [{ kind: "abort", rollback: true, reason: "wrong build" }],
    });
    expect(d.changes.campaign?.phase).toBe("rolling_back");
    expect(d.wakeAt).toBe(30_000 + 10 * MIN);
  });

  it("not at that grace's end while the batch is breached and the campaign paused on it", () => {
    const h = start(fleet(2, { capabilities: () => ["upgrade.v1", "config.v1"] }), {
      disruptionBudgetPercent: 100,
      configGraceMs: 0,
      gates: [{ kind: "webhook", url: "http://hook" }],
      gateGraceMs: MIN,
      onBreach: "pause",
      failureThresholdPercent: 0,
      batches: [{ percent: 100, minDurationMs: 0 }],
    });
    decideWith(h, []);
    h.now = 10_000;
    bringBack(h, batchIds(h, 0));
    decideWith(h, []);
    h.now = 30_000;
    configFails(h, batchIds(h, 0)[0]!);
    const d = decideWith(h, [unreachable]);
    expect(h.campaign.phase).toBe("paused");
    expect(h.campaign.batches[0]?.state).toBe("breached");
    expect(d.wakeAt).toBeUndefined();
  });
});
