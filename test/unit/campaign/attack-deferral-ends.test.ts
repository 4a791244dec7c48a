/**
 * A DEFERRED answer wherever a campaign may stand when it arrives: in the same decision as an
 * abort with rollback, after a pause, after a breach under each on_breach, as a stale answer to
 * an earlier offer, and across a takeover. Each campaign must still finish (every node final,
 * finishedAt set) and a node that only deferred is never counted as a failure.
 */
import { describe, expect, it } from "vitest";
import type { CampaignSpecInput } from "../../../control/campaign/index.js";
import { isFinal } from "../../../control/campaign/index.js";
import type { Harness } from "./harness.js";
import {
  advance,
  bringBack,
  fleet,
  goOffline,
  MIN,
  NEW,
  nodeOf,
  OLD,
  report,
  sent,
  start,
  tick,
} from "./harness.js";

const busy = { code: "deferred", message: "the update lock /run/lock held" };

const oneBatch = (extra: Partial<CampaignSpecInput> = {}): Partial<CampaignSpecInput> => ({
  batches: [{ percent: 100, minDurationMs: 0 }],
  failureThresholdPercent: 0,
  disruptionBudgetPercent: 100,
  configGraceMs: 0,
  maxDeferMs: 60 * MIN,
  ...extra,
});

/** The node ids the harness's campaign has offered (and that are still so). */
const offered = (h: Harness): string[] =>
  h.nodes.filter((n) => n.state === "offered").map((n) => n.nodeId);

/** Every node final and the campaign finished. */
function expectFinished(h: Harness): void {
  expect(h.nodes.filter((n) => !isFinal(n.state)).map((n) => `${n.nodeId}:${n.state}`)).toEqual([]);
  expect(h.campaign.finishedAt).toBeDefined();
}

describe("a DEFERRED answer racing an abort with rollback", () => {
  it("in the same decision: the node, sent the rollback, is judged back at once (it applied nothing), and the campaign ends aborted", () => {
    const h = start(fleet(1), oneBatch());
    tick(h);
    expect(offered(h)).toEqual(["node-000"]);
    h.now += 1_000;
    report(h, "node-000", "DEFERRED", "upgrade", busy);
    tick(h, [{ kind: "abort", rollback: true }]);
    expect(sent(h, "rollback")).toEqual(["node-000"]);
    expect(nodeOf(h, "node-000")).toMatchObject({
      state: "rolled_back",
      message: `back on ${OLD}`,
    });
    expect(h.campaign).toMatchObject({ phase: "aborted", code: "aborted" });
    expectFinished(h);
  });

  it("after the abort: the upgrade's late DEFERRED answering the offer says the node never left its version", () => {
    const h = start(fleet(1), oneBatch());
    tick(h);
    h.now += 1_000;
    tick(h, [{ kind: "abort", rollback: true }]);
    expect(nodeOf(h, "node-000").state).toBe("rolling_back");
    h.now += 1_000;
    report(h, "node-000", "DEFERRED", "upgrade", busy);
    tick(h);
    expect(nodeOf(h, "node-000")).toMatchObject({
      state: "rolled_back",
      message: `back on ${OLD}`,
    });
    expect(h.campaign).toMatchObject({ phase: "aborted", code: "aborted" });
    expectFinished(h);
  });

  it("a DEFERRED that answered an earlier offer says nothing of the rollback: the node waits for its answer", () => {
    const h = start(fleet(1), oneBatch({ maxDeferMs: 8 * MIN }));
    tick(h);
    h.now += 1_000;
    report(h, "node-000", "DEFERRED", "upgrade", busy);
    tick(h);
    expect(nodeOf(h, "node-000").state).toBe("waiting");
    // Offered again at its retry time; the agent takes it this time (no answer yet).
    for (let i = 0; i < 3 && offered(h).length === 0; i++) advance(h, MIN);
    expect(offered(h)).toEqual(["node-000"]);
    h.now += 1_000;
    tick(h, [{ kind: "abort", rollback: true }]);
    expect(nodeOf(h, "node-000").state).toBe("rolling_back");
    h.now += 1_000;
    tick(h);
    expect(nodeOf(h, "node-000").state).toBe("rolling_back");
    report(h, "node-000", "REINSTATED", "rollback");
    tick(h);
    expect(nodeOf(h, "node-000").state).toBe("rolled_back");
    expectFinished(h);
  });

  // A REFUSED upgrade in the same race is judged back at once (its agent never left the
  // previous release). A DEFERRED one means the same — the Agent applied nothing and forgot the
  // operation — so an agent that dropped its stream after deferring does not make a deliberate
  // abort end failed/rollback_unconfirmed, naming a node that never left its version.
  it("in the same decision, the agent then silent: judged back as a REFUSED one is, not rollback_unconfirmed", () => {
    const h = start(fleet(1), oneBatch({ reconnectTimeoutMs: 5 * MIN }));
    tick(h);
    h.now += 1_000;
    report(h, "node-000", "DEFERRED", "upgrade", busy);
    tick(h, [{ kind: "abort", rollback: true }]);
    goOffline(h, "node-000");
    for (let i = 0; i < 12; i++) advance(h, MIN);
    expect(h.facts.get("node-000")?.agentVersion).toBe(OLD);
    expect(h.campaign).toMatchObject({ phase: "aborted", code: "aborted" });
  });

  it("the same race with a REFUSED upgrade ends aborted at once (the reference for the case above)", () => {
    const h = start(fleet(1), oneBatch({ reconnectTimeoutMs: 5 * MIN }));
    tick(h);
    h.now += 1_000;
    report(h, "node-000", "REFUSED", "upgrade", { code: "busy", message: "no" });
    tick(h, [{ kind: "abort", rollback: true }]);
    goOffline(h, "node-000");
    tick(h);
    expect(h.campaign).toMatchObject({ phase: "aborted", code: "aborted" });
    expectFinished(h);
  });
});

describe("a DEFERRED answer after a pause", () => {
  it("returns the node to waiting, nothing is offered while paused, and after resume it is offered and the campaign completes", () => {
    const h = start(fleet(1), oneBatch());
    tick(h);
    tick(h, [{ kind: "pause" }]);
    h.now += 1_000;
    report(h, "node-000", "DEFERRED", "upgrade", busy);
    tick(h);
    expect(nodeOf(h, "node-000").state).toBe("waiting");
    h.now += 10 * MIN;
    tick(h);
    expect(nodeOf(h, "node-000").state).toBe("waiting");
    expect(sent(h, "upgrade")).toHaveLength(1);
    tick(h, [{ kind: "resume" }]);
    expect(nodeOf(h, "node-000").state).toBe("offered");
    expect(sent(h, "upgrade")).toHaveLength(2);
    h.now += 1_000;
    report(h, "node-000", "RESTARTING");
    bringBack(h, ["node-000"], NEW);
    tick(h);
    tick(h);
    expect(h.campaign.phase).toBe("completed");
    expectFinished(h);
  });

  it("a deferral that ran out during the pause is skipped deferred on resume, and the campaign completes", () => {
    const h = start(fleet(1), oneBatch({ maxDeferMs: 5 * MIN }));
    tick(h);
    h.now += 1_000;
    report(h, "node-000", "DEFERRED", "upgrade", busy);
    tick(h);
    tick(h, [{ kind: "pause" }]);
    h.now += 30 * MIN;
    tick(h);
    expect(nodeOf(h, "node-000").state).toBe("waiting");
    tick(h, [{ kind: "resume" }]);
    expect(nodeOf(h, "node-000")).toMatchObject({ state: "skipped", code: "deferred" });
    expect(h.campaign.phase).toBe("completed");
    expectFinished(h);
  });
});

describe("a DEFERRED answer after a breach", () => {
  /** Two nodes offered together; node-001 fails, then node-000 defers. */
  function breachThenDefer(onBreach: "pause" | "stop" | "rollback"): Harness {
    const h = start(fleet(2), oneBatch({ onBreach }));
    tick(h);
    expect(offered(h)).toHaveLength(2);
    h.now += 1_000;
    report(h, "node-001", "FAILED", "upgrade", { code: "disk_full", message: "disk full" });
    tick(h);
    h.now += 1_000;
    report(h, "node-000", "DEFERRED", "upgrade", busy);
    tick(h);
    return h;
  }

  it("on_breach stop: the deferring node is canceled batch_failed, never failed, and the campaign finishes failed", () => {
    const h = breachThenDefer("stop");
    expect(nodeOf(h, "node-000")).toMatchObject({ state: "canceled", code: "batch_failed" });
    expect(h.campaign.phase).toBe("failed");
    expectFinished(h);
  });

  it("on_breach pause: it waits, an abort cancels it, and the campaign finishes aborted", () => {
    const h = breachThenDefer("pause");
    expect(h.campaign.phase).toBe("paused");
    expect(nodeOf(h, "node-000").state).toBe("waiting");
    h.now += 1_000;
    tick(h, [{ kind: "abort", rollback: false }]);
    expect(nodeOf(h, "node-000")).toMatchObject({ state: "canceled", code: "aborted" });
    expect(h.campaign.phase).toBe("aborted");
    expectFinished(h);
  });

  it("on_breach pause: an abort with rollback cancels the waiting deferred node and the rollback ends", () => {
    const h = breachThenDefer("pause");
    h.now += 1_000;
    tick(h, [{ kind: "abort", rollback: true }]);
    expect(nodeOf(h, "node-000")).toMatchObject({ state: "canceled", code: "aborted" });
    expect(h.campaign.phase).toBe("aborted");
    expectFinished(h);
  });

  it("on_breach rollback: the node deferring while its batch rolls back is not failed, and the rollback ends", () => {
    const h = start(fleet(2), oneBatch({ onBreach: "rollback" }));
    tick(h);
    h.now += 1_000;
    report(h, "node-001", "FAILED", "upgrade", { code: "disk_full", message: "disk full" });
    tick(h);
    expect(h.campaign.phase).toBe("rolling_back");
    expect(nodeOf(h, "node-000").state).toBe("rolling_back");
    h.now += 1_000;
    report(h, "node-000", "DEFERRED", "upgrade", busy);
    report(h, "node-000", "REINSTATED", "rollback");
    tick(h);
    expect(nodeOf(h, "node-000").state).toBe("rolled_back");
    expect(h.campaign.phase).toBe("rolled_back");
    expectFinished(h);
  });
});

describe("a stale DEFERRED and a takeover", () => {
  it("a DEFERRED to the first offer, still on record at the re-offer, does not send the node back to waiting", () => {
    const h = start(fleet(1), oneBatch());
    tick(h);
    h.now += 1_000;
    report(h, "node-000", "DEFERRED", "upgrade", busy);
    tick(h);
    h.now = nodeOf(h, "node-000").deferRetryAt as number;
    tick(h);
    expect(nodeOf(h, "node-000").state).toBe("offered");
    // The old DEFERRED is still the latest report of the (same) operation.
    h.now += 1_000;
    tick(h);
    expect(nodeOf(h, "node-000")).toMatchObject({ state: "offered", deferrals: 1 });
  });

  it("after a takeover the deferred node is offered again at its retry time, and the campaign completes", () => {
    const h = start(fleet(1), oneBatch());
    tick(h);
    h.now += 1_000;
    report(h, "node-000", "DEFERRED", "upgrade", busy);
    tick(h);
    const retry = nodeOf(h, "node-000").deferRetryAt as number;
    // Control was down; the new leader is ready just after the retry time.
    h.now = retry + 5_000;
    tick(h, [], { readyAt: retry + 4_000 });
    expect(nodeOf(h, "node-000").state).toBe("offered");
    h.now += 1_000;
    report(h, "node-000", "RESTARTING");
    bringBack(h, ["node-000"], NEW);
    tick(h, [], { readyAt: retry + 4_000 });
    tick(h, [], { readyAt: retry + 4_000 });
    expect(h.campaign.phase).toBe("completed");
    expectFinished(h);
  });
});

describe("a DEFERRED stamped by another Control's clock", () => {
  // The report's time is stamped by the Control holding the node's stream (intake.ts: the hub
  // event's time), the offer's by the leader's clock (offeredAt). A replica whose clock is 50 ms
  // behind the leader's stamps a DEFERRED given 10 ms after the offer 40 ms before it: the
  // engine must not take it for an answer to an earlier offer (there was none), or at the
  // reconnect deadline the node that only deferred is failed reconnect_timeout and breaches.
  it("a first DEFERRED stamped a little before offeredAt is still the answer to the only offer there was", () => {
    const h = start(fleet(1), oneBatch({ reconnectTimeoutMs: 5 * MIN }));
    h.now = 10_000;
    tick(h);
    expect(nodeOf(h, "node-000")).toMatchObject({ state: "offered", offeredAt: 10_000 });
    h.now = 10_010;
    report(h, "node-000", "DEFERRED", "upgrade", busy);
    const f = h.facts.get("node-000");
    if (f === undefined) throw new Error("no facts");
    h.facts.set("node-000", { ...f, reports: f.reports.map((r) => ({ ...r, at: 9_960 })) });
    tick(h);
    advance(h, 5 * MIN);
    expect(nodeOf(h, "node-000").state).not.toBe("failed");
    expect(h.campaign.phase).not.toBe("rolling_back");
  });
});
