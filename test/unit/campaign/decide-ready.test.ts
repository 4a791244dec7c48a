/**
 * Deadlines after a Control restart or takeover: while no Control decided, no node could be
 * sent its operation or be seen back, so a reconnect or rollback deadline is never judged
 * within one reconnect timeout of the moment this Control became ready (`readyAt`).
 */
import { describe, expect, it } from "vitest";
import { fleet, goReconnecting, MIN, nodeOf, report, start, tick } from "./harness.js";

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
