import { describe, expect, it } from "vitest";
import type { Decision, JudgedMark } from "../../../control/campaign/index.js";
import { decide } from "../../../control/campaign/index.js";
import { REVERT_REPORT_GRACE_MS } from "../../../control/campaign/judge-node.js";
import {
  fleet,
  type Harness,
  MIN,
  NEW,
  nodeOf,
  OLD,
  reboot,
  report,
  start,
  tick,
} from "./harness.js";

/** Three nodes in one batch, all offered by a first decision; returns its mark. */
function offeredAll(): { h: Harness; mark: JudgedMark } {
  const h = start(fleet(3), {
    batches: [{ percent: 100, minDurationMs: 0 }],
    concurrency: 3,
    disruptionBudgetPercent: 100,
    failureThresholdPercent: 100,
    reconnectTimeoutMs: 10 * MIN,
  });
  const first = tick(h);
  expect(h.nodes.map((n) => n.state)).toEqual(["offered", "offered", "offered"]);
  if (first.judged === undefined) throw new Error("the first decision settled and left a mark");
  return { h, mark: first.judged };
}

/** The harness's decision now, judging only since `mark` with `changed` said to have changed. */
function since(h: Harness, mark: JudgedMark, changed: string[], pause = false): Decision {
  return decide({
    campaign: h.campaign,
    nodes: h.nodes,
    facts: h.facts,
    now: h.now,
    target: h.target,
    commands: pause ? [{ kind: "pause" }] : [],
    judgedSince: { mark, changedFacts: new Set(changed) },
  });
}

const stateIn = (d: Decision, nodeId: string) =>
  d.changes.nodes.find((n) => n.nodeId === nodeId)?.state;

describe("judging since the previous decision", () => {
  it("judges a node said to have changed and leaves one whose change was not said alone", () => {
    const { h, mark } = offeredAll();
    h.now += 1000;
    report(h, "node-000", "REFUSED");
    report(h, "node-001", "REFUSED");
    const d = since(h, mark, ["node-000"]);
    expect(stateIn(d, "node-000")).toBe("failed");
    // Not said: the incremental path does not look (a truthful caller always says it).
    expect(stateIn(d, "node-001")).toBeUndefined();
    expect(nodeOf(h, "node-001").state).toBe("offered");
  });

  it("judges a node whose reconnect deadline passed since the mark though nothing was said", () => {
    const { h, mark } = offeredAll();
    h.now = nodeOf(h, "node-002").reconnectDeadline ?? 0;
    const d = since(h, mark, []);
    expect(d.changes.nodes.map((n) => [n.nodeId, n.state, n.code]).sort()).toEqual([
      ["node-000", "failed", "reconnect_timeout"],
      ["node-001", "failed", "reconnect_timeout"],
      ["node-002", "failed", "reconnect_timeout"],
    ]);
  });

  it("judges a node back on another version once its time to report why ran out, though nothing was said", () => {
    const { h } = offeredAll();
    h.now += 1000;
    report(h, "node-000", "RESTARTING");
    tick(h);
    h.now += 1000;
    reboot(h, "node-000", OLD);
    const seen = tick(h);
    expect(nodeOf(h, "node-000").revertSeenAt).toBe(h.now);
    if (seen.judged === undefined) throw new Error("the decision settled and left a mark");
    h.now += REVERT_REPORT_GRACE_MS;
    const d = since(h, seen.judged, []);
    expect(d.changes.nodes.map((n) => [n.nodeId, n.state, n.code])).toEqual([
      ["node-000", "failed", "reverted"],
    ]);
  });

  it("does not judge a deadline the mark's decision already passed, unless said", () => {
    const { h, mark } = offeredAll();
    const late = { ...mark, at: h.now + 20 * MIN };
    h.now += 20 * MIN;
    report(h, "node-000", "REFUSED");
    // A mark from now: nothing crossed since, nothing said, nothing judged.
    expect(since(h, late, []).changes.nodes).toEqual([]);
  });

  it("judges every active node again when the judging context changed (a pause)", () => {
    const { h, mark } = offeredAll();
    h.now += 1000;
    report(h, "node-001", "REFUSED");
    const d = since(h, mark, [], true);
    expect(h.campaign.phase).toBe("running");
    expect(stateIn(d, "node-001")).toBe("failed");
  });

  it("judges every active node when the mark is from a later time than now", () => {
    const { h, mark } = offeredAll();
    h.now += 1000;
    report(h, "node-001", "REFUSED");
    expect(stateIn(since(h, { ...mark, at: h.now + 1 }, []), "node-001")).toBe("failed");
  });

  it("judges again within the decision a node its own rounds changed", () => {
    // One slot: the offered node fails in the first round, the next is offered in its place and must
    // be judged in the next round though it was never said to have changed (a REFUSED
    // report for its operation is already at hand).
    const h = start(fleet(3), {
      batches: [{ percent: 100, minDurationMs: 0 }],
      concurrency: 1,
      disruptionBudgetPercent: 100,
      failureThresholdPercent: 100,
    });
    const mark = tick(h).judged;
    if (mark === undefined) throw new Error("the first decision settled and left a mark");
    const [first, next] = [...h.nodes].sort((a, b) => a.order - b.order).map((n) => n.nodeId);
    if (first === undefined || next === undefined) throw new Error("three nodes");
    expect(nodeOf(h, first).state).toBe("offered");
    h.now += 1000;
    report(h, first, "REFUSED");
    report(h, next, "REFUSED");
    const d = since(h, mark, [first]);
    expect(stateIn(d, next)).toBe("failed");
    expect(d).toEqual(
      decide({
        campaign: h.campaign,
        nodes: h.nodes,
        facts: h.facts,
        now: h.now,
        target: h.target,
      }),
    );
  });

  it("judges a rolling-back node whose rollback deadline passed since the mark", () => {
    const h = start(fleet(3), {
      batches: [{ percent: 100, minDurationMs: 0 }],
      concurrency: 3,
      disruptionBudgetPercent: 100,
      failureThresholdPercent: 0,
      onBreach: "rollback",
    });
    tick(h);
    h.now += 1000;
    report(h, "node-000", "REFUSED");
    const breached = tick(h);
    expect(h.campaign.phase).toBe("rolling_back");
    const back = h.nodes.filter((n) => n.state === "rolling_back");
    expect(back.length).toBe(2);
    if (breached.judged === undefined) throw new Error("the breach settled and left a mark");
    h.now = Math.max(...back.map((n) => n.rollbackDeadline ?? 0));
    const d = since(h, breached.judged, []);
    for (const n of back) {
      expect(d.changes.nodes.find((x) => x.nodeId === n.nodeId)).toMatchObject({
        state: "rollback_failed",
        code: "rollback_unconfirmed",
      });
    }
  });

  it("judges a verifying node whose config grace ended since the mark, after an abort", () => {
    const h = start(fleet(3, { capabilities: () => ["upgrade.v1", "config.v1"] }), {
      batches: [{ percent: 100, minDurationMs: 0 }],
      concurrency: 3,
      disruptionBudgetPercent: 100,
      configGraceMs: 5 * MIN,
    });
    tick(h);
    h.now += 1000;
    reboot(h, "node-000", NEW);
    tick(h);
    expect(nodeOf(h, "node-000").state).toBe("verifying");
    const aborted = tick(h, [{ kind: "abort", rollback: false }]);
    expect(h.campaign.phase).toBe("aborted");
    expect(nodeOf(h, "node-000").state).toBe("verifying");
    if (aborted.judged === undefined) throw new Error("the abort settled and left a mark");
    h.now = nodeOf(h, "node-000").graceEndsAt ?? 0;
    expect(stateIn(since(h, aborted.judged, []), "node-000")).toBe("succeeded");
  });
});
