/**
 * The reconnect timeout is a time to come back: it counts from the node's latest step on the
 * upgrade that leads to a restart (the offer, then its report that it restarts), so a node
 * that took most of the timeout to download and reports RESTARTING is not judged failed while
 * its agent restarts onto the release, freeing its slot of the pool's budget for another node
 * (PD1, found by the simulation's generator on seed 244).
 */
import { describe, expect, it } from "vitest";
import { fleet, MIN, nodeOf, report, start, tick } from "./harness.js";

const id = "node-000";

function offeredAlone() {
  const h = start(fleet(2), {
    batches: [{ percent: 100, minDurationMs: 0 }],
    failureThresholdPercent: 100,
    disruptionBudgetPercent: 50,
    reconnectTimeoutMs: 10 * MIN,
  });
  tick(h);
  expect(nodeOf(h, id).state).toBe("offered");
  expect(nodeOf(h, "node-001").state).toBe("waiting");
  return h;
}

describe("the reconnect timeout of a node that reports its steps", () => {
  it("counts again from its RESTARTING report: still restarting past offer + timeout, its slot held", () => {
    const h = offeredAlone();
    h.now = 7 * MIN;
    report(h, id, "DOWNLOADING");
    tick(h);
    h.now = 9 * MIN;
    report(h, id, "RESTARTING");
    tick(h);
    expect(nodeOf(h, id).state).toBe("restarting");
    h.now = 10 * MIN;
    tick(h);
    expect(nodeOf(h, id).state).toBe("restarting");
    expect(nodeOf(h, "node-001").state).toBe("waiting");
    h.now = 19 * MIN;
    tick(h);
    expect(nodeOf(h, id)).toMatchObject({ state: "failed", code: "reconnect_timeout" });
  });

  it("does not count again from a report that it applies: a download is not a restart", () => {
    const h = offeredAlone();
    h.now = 8 * MIN;
    report(h, id, "DOWNLOADING");
    tick(h);
    expect(nodeOf(h, id).state).toBe("applying");
    h.now = 10 * MIN;
    tick(h);
    expect(nodeOf(h, id)).toMatchObject({ state: "failed", code: "reconnect_timeout" });
  });

  it("never moves for a node that only stays offered", () => {
    const h = offeredAlone();
    h.now = 10 * MIN;
    tick(h);
    expect(nodeOf(h, id)).toMatchObject({ state: "failed", code: "reconnect_timeout" });
  });
});
