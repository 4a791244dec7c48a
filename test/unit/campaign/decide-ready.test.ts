/**
 * Deadlines after a Control restart or takeover: while no Control decided, no node could be
 * sent its operation or be seen back, so a reconnect or rollback deadline is never judged
 * within one reconnect timeout of the moment this Control became ready (`readyAt`); and a batch
 * does not pass on what its nodes ran before their streams were lost.
 */
import { describe, expect, it } from "vitest";
import {
  batchIds,
  bringBack,
  fleet,
  goOffline,
  goOnline,
  goReconnecting,
  inState,
  MIN,
  nodeOf,
  OLD,
  reboot,
  report,
  start,
  tick,
} from "./harness.js";

const one = [{ percent: 100, minDurationMs: 0 }];
const id = "node-000";
const TIMEOUT = 10 * MIN;

function restarting() {
  const h = start(fleet(1), {
    batches: one,
    failureThresholdPercent: 100,
    reconnectTimeoutMs: TIMEOUT,
  });
  tick(h);
  report(h, id, "RESTARTING");
  tick(h);
  goReconnecting(h, id);
  return h;
}

describe("deadlines after this Control became ready", () => {
  it("does not judge a reconnect deadline that passed before a restart until a timeout after it", () => {
    const h = restarting();
    const readyAt = h.now + 9 * MIN;
    h.now += 11 * MIN;
    tick(h, [], { readyAt });
    expect(nodeOf(h, id).state).toBe("restarting");
    h.now = readyAt + TIMEOUT;
    tick(h, [], { readyAt });
    expect(nodeOf(h, id)).toMatchObject({ state: "failed", code: "reconnect_timeout" });
  });

  it("wakes at the deadline it moved", () => {
    const h = restarting();
    const readyAt = h.now + 9 * MIN;
    h.now += 11 * MIN;
    const d = tick(h, [], { readyAt });
    expect(d.wakeAt).toBe(readyAt + TIMEOUT);
  });

  it("judges deadlines as before when this Control was ready long before them", () => {
    const h = restarting();
    h.now += TIMEOUT;
    tick(h, [], { readyAt: 0 });
    expect(nodeOf(h, id)).toMatchObject({ state: "failed", code: "reconnect_timeout" });
  });
});

/**
 * Four nodes back on the target (no config.v1: no grace) in one 30-minute batch, threshold 20 %
 * (one failure breaches). At 20 minutes Control goes down: every stream is lost.
 */
function soakingWhenControlStops() {
  const h = start(fleet(4), {
    batches: [{ percent: 100, minDurationMs: 30 * MIN }],
    failureThresholdPercent: 20,
    disruptionBudgetPercent: 100,
  });
  tick(h);
  h.now = MIN;
  bringBack(h, batchIds(h, 0));
  tick(h);
  expect(inState(h, "verifying")).toHaveLength(4);
  h.now = 20 * MIN;
  tick(h);
  for (const n of batchIds(h, 0)) goReconnecting(h, n);
  return h;
}

describe("passing a batch after this Control became ready", () => {
  it("does not pass on nodes not seen since: one that reverted while Control was down breaches the batch", () => {
    const h = soakingWhenControlStops();
    const readyAt = 35 * MIN;
    h.now = readyAt + 1000;
    tick(h, [], { readyAt });
    expect(h.campaign.phase).toBe("running");
    expect(h.campaign.batches[0]?.state).toBe("running");
    const [reverted, ...rest] = batchIds(h, 0) as [string, ...string[]];
    for (const n of rest) goOnline(h, n);
    h.now += 1000;
    tick(h, [], { readyAt });
    expect(h.campaign.phase).toBe("running");
    reboot(h, reverted, OLD);
    h.now += 1000;
    tick(h, [], { readyAt });
    expect(nodeOf(h, reverted)).toMatchObject({ state: "failed", code: "reverted" });
    expect(h.campaign.phase).toBe("rolling_back");
  });

  it("passes once every node is back; one away long enough to be offline holds it until it is back", () => {
    const h = soakingWhenControlStops();
    const readyAt = 35 * MIN;
    const [away, ...rest] = batchIds(h, 0) as [string, ...string[]];
    for (const n of rest) goOnline(h, n);
    h.now = readyAt + 1000;
    tick(h, [], { readyAt });
    expect(h.campaign.phase).toBe("running");
    goOffline(h, away);
    h.now += 1000;
    tick(h, [], { readyAt });
    expect(h.campaign.phase).toBe("running");
    expect(nodeOf(h, away)).toMatchObject({ state: "verifying", awaySince: h.now });
    h.now += 5 * MIN;
    goOnline(h, away);
    tick(h, [], { readyAt });
    expect(h.campaign.phase).toBe("completed");
    expect(inState(h, "succeeded")).toHaveLength(4);
  });

  it("fails one away long enough to be offline lost_after_upgrade a reconnect timeout later", () => {
    const h = soakingWhenControlStops();
    const readyAt = 35 * MIN;
    const [away, ...rest] = batchIds(h, 0) as [string, ...string[]];
    for (const n of rest) goOnline(h, n);
    goOffline(h, away);
    h.now = readyAt + 1000;
    tick(h, [], { readyAt });
    h.now += 10 * MIN - 1;
    tick(h, [], { readyAt });
    expect(nodeOf(h, away).state).toBe("verifying");
    h.now += 1;
    tick(h, [], { readyAt });
    expect(nodeOf(h, away)).toMatchObject({ state: "failed", code: "lost_after_upgrade" });
    expect(h.campaign.phase).toBe("rolling_back");
  });
});
