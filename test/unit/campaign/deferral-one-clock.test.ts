/**
 * One clock for ordering across Controls: a DEFERRED report is stamped by the Control holding
 * the node's stream, an offer by the leader, and the two clocks may disagree by seconds. Whether
 * a DEFERRED answers the node's latest offer is read from the database's order of reports
 * (`ObservedReport.seq`), never by comparing the holder's stamp with the leader's offer time.
 */
import { describe, expect, it } from "vitest";
import type { CampaignSpecInput, ObservedReport } from "../../../control/campaign/index.js";
import { operationId } from "../../../control/campaign/index.js";
import type { Harness } from "./harness.js";
import { advance, fleet, MIN, nodeOf, OLD, report, start, tick } from "./harness.js";

const A = "node-000";
const busy = { code: "deferred", message: "the update lock /run/lock held" };
const oneBatch = (extra: Partial<CampaignSpecInput> = {}): Partial<CampaignSpecInput> => ({
  batches: [{ percent: 100, minDurationMs: 0 }],
  failureThresholdPercent: 0,
  disruptionBudgetPercent: 100,
  configGraceMs: 0,
  maxDeferMs: 60 * MIN,
  reconnectTimeoutMs: 10 * MIN,
  ...extra,
});

/** The node's stored upgrade report, as the leader reads it. */
function upgradeReport(h: Harness, nodeId: string): ObservedReport {
  const id = operationId(h.campaign.id, nodeId, "upgrade");
  const r = h.facts.get(nodeId)?.reports.find((x) => x.operationId === id);
  if (r === undefined) throw new Error(`no upgrade report of ${nodeId}`);
  return r;
}

/** Replaces the node's stored upgrade report with `patch` applied (its stamp, its seq). */
function restamp(h: Harness, nodeId: string, patch: Partial<ObservedReport>): void {
  const f = h.facts.get(nodeId);
  if (f === undefined) throw new Error(`no facts for ${nodeId}`);
  const r = upgradeReport(h, nodeId);
  h.facts.set(nodeId, {
    ...f,
    reports: f.reports.map((x) => (x === r ? { ...r, ...patch } : x)),
  });
}

/** Defers once, then is offered again at its retry time; returns the re-offer's time. */
function deferThenReoffer(h: Harness): number {
  tick(h);
  h.now += 1_000;
  report(h, A, "DEFERRED", "upgrade", busy);
  tick(h);
  expect(nodeOf(h, A)).toMatchObject({ state: "waiting", deferrals: 1 });
  for (let i = 0; i < 3 && nodeOf(h, A).state !== "offered"; i++) advance(h, MIN);
  expect(nodeOf(h, A).state).toBe("offered");
  return nodeOf(h, A).offeredAt as number;
}

describe("a DEFERRED answer through a Control whose clock is behind the leader's", () => {
  it("answers the re-offer it follows in the database: back to waiting, never reconnect_timeout", () => {
    const h = start(fleet(1), oneBatch());
    const reofferedAt = deferThenReoffer(h);
    h.now += 200;
    // The holder's clock is 1 s behind: its stamp reads 800 ms before the leader's re-offer.
    report(h, A, "DEFERRED", "upgrade", busy);
    restamp(h, A, { at: reofferedAt - 800 });
    tick(h);
    expect(nodeOf(h, A)).toMatchObject({ state: "waiting", deferrals: 2 });
    // It waits for its retry time, holding no slot and no reconnect deadline.
    advance(h, MIN - 1);
    expect(nodeOf(h, A)).toMatchObject({ state: "waiting", reconnectDeadline: undefined });
    expect(h.campaign.phase).toBe("running");
  });

  it("says, in the rollback of an abort in the same decision, that the node never left its version", () => {
    const h = start(fleet(1), oneBatch());
    const reofferedAt = deferThenReoffer(h);
    h.now += 200;
    report(h, A, "DEFERRED", "upgrade", busy);
    restamp(h, A, { at: reofferedAt - 800 });
    tick(h, [{ kind: "abort", rollback: true }]);
    expect(nodeOf(h, A)).toMatchObject({ state: "rolled_back", message: `back on ${OLD}` });
    expect(h.campaign).toMatchObject({ phase: "aborted", code: "aborted" });
  });
});

describe("the DEFERRED already judged, read again after the re-offer", () => {
  it("is not taken for an answer to the re-offer whatever its stamp says (a holder 2 s ahead)", () => {
    // A max defer of 4 s: retried after 1 s, so a holder 2 s ahead stamps the first answer after
    // the re-offer.
    const h = start(fleet(1), oneBatch({ maxDeferMs: 4_000 }));
    tick(h);
    h.now += 100;
    report(h, A, "DEFERRED", "upgrade", busy);
    restamp(h, A, { at: h.now + 2_000 });
    tick(h);
    expect(nodeOf(h, A)).toMatchObject({ state: "waiting", deferrals: 1 });
    advance(h, 1_000);
    expect(nodeOf(h, A).state).toBe("offered");
    // The leader still holds the first answer (its copy read before the re-offer's reset).
    tick(h);
    expect(nodeOf(h, A)).toMatchObject({ state: "offered", deferrals: 1 });
  });
});

// The Agent forgets an operation it deferred: a second delivery of the same offer (it was sent
// on two streams, or re-sent before the DEFERRED was acknowledged) that reaches it once it is no
// longer busy is applied. Control, having recorded the DEFERRED, holds the node waiting; the
// reports of that delivery, written after the DEFERRED, put it back in flight.
describe("a later delivery of the offer it deferred, taken by the Agent", () => {
  const B = "node-001";
  /** Two nodes, one slot: A defers and B takes the slot. */
  function deferredWhileBHoldsTheSlot(extra: Partial<CampaignSpecInput> = {}): Harness {
    const h = start(fleet(2), oneBatch({ concurrency: 1, ...extra }));
    tick(h);
    expect(nodeOf(h, A).state).toBe("offered");
    h.now += 1_000;
    report(h, A, "DEFERRED", "upgrade", busy);
    tick(h);
    expect(nodeOf(h, A).state).toBe("waiting");
    expect(nodeOf(h, B).state).toBe("offered");
    return h;
  }

  it("counts the node in flight as soon as its progress is written, not as waiting", () => {
    const h = deferredWhileBHoldsTheSlot();
    h.now += 1_000;
    report(h, A, "APPLYING");
    const d = tick(h);
    expect(nodeOf(h, A)).toMatchObject({ state: "applying", reconnectDeadline: h.now + 10 * MIN });
    expect(nodeOf(h, A).deferRetryAt).toBeUndefined();
    // Nothing is sent again: the Agent is applying the operation it has.
    expect(d.actions.filter((a) => a.nodeId === A)).toEqual([]);
  });

  it("counts its failure toward the threshold, as any offered node's", () => {
    const h = deferredWhileBHoldsTheSlot();
    h.now += 1_000;
    report(h, A, "FAILED", "upgrade", { code: "sha256_mismatch", message: "bad artifact" });
    tick(h);
    expect(nodeOf(h, A)).toMatchObject({ state: "failed", code: "apply_failed" });
    expect(h.campaign.phase).not.toBe("running");
  });

  it("is never skipped deferred while it applies, however long past its max defer", () => {
    const h = deferredWhileBHoldsTheSlot({ maxDeferMs: 2 * MIN });
    h.now += 1_000;
    report(h, A, "DOWNLOADING");
    tick(h);
    advance(h, 3 * MIN);
    expect(nodeOf(h, A).state).toBe("applying");
  });

  it("a second DEFERRED answer while it waits keeps it waiting", () => {
    const h = deferredWhileBHoldsTheSlot();
    h.now += 1_000;
    report(h, A, "DEFERRED", "upgrade", busy);
    tick(h);
    expect(nodeOf(h, A)).toMatchObject({ state: "waiting", deferrals: 1 });
  });
});

describe("a second DEFERRED answer to the offer it deferred (a duplicate delivery), written while it waits", () => {
  it("is not taken for the answer to the re-offer, even in a copy read before the re-offer reset the row", () => {
    const h = start(fleet(1), oneBatch());
    tick(h);
    h.now += 1_000;
    report(h, A, "DEFERRED", "upgrade", busy);
    tick(h);
    h.now += 5;
    // The duplicate's answer: a new number, the node still waits.
    report(h, A, "DEFERRED", "upgrade", busy);
    tick(h);
    expect(nodeOf(h, A)).toMatchObject({ state: "waiting", deferrals: 1 });
    for (let i = 0; i < 3 && nodeOf(h, A).state !== "offered"; i++) advance(h, MIN);
    expect(nodeOf(h, A).state).toBe("offered");
    // The leader's copy still holds the duplicate: the node waits for its real answer.
    h.now += 25;
    tick(h);
    expect(nodeOf(h, A)).toMatchObject({ state: "offered", deferrals: 1 });
  });
});
