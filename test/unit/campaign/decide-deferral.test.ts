/**
 * Deferral on the pure engine: a node that answers DEFERRED goes back to waiting (neither
 * failed nor in flight), is offered again only after its retry time and when a slot is free,
 * and ends skipped `deferred` once the campaign's max defer has passed since its first deferral.
 */
import { describe, expect, it } from "vitest";
import type { CampaignSpecInput } from "../../../control/campaign/index.js";
import { advance, bringBack, fleet, MIN, NEW, nodeOf, report, start, tick } from "./harness.js";

const A = "node-000";
const B = "node-001";
const oneBatch = (extra: Partial<CampaignSpecInput> = {}): Partial<CampaignSpecInput> => ({
  batches: [{ percent: 100, minDurationMs: 0 }],
  failureThresholdPercent: 0,
  disruptionBudgetPercent: 100,
  ...extra,
});
const busy = { code: "deferred", message: "the update lock /run/lock held" };

describe("a node that defers", () => {
  it("goes back to waiting with its reason, is not a failure, and frees its slot for the next node", () => {
    const h = start(fleet(2), oneBatch({ concurrency: 1 }));
    tick(h);
    const first = fleet(2)
      .map((c) => c.id)
      .find((id) => nodeOf(h, id).state === "offered") as string;
    const other = first === A ? B : A;
    report(h, first, "DEFERRED", "upgrade", busy);
    tick(h);
    expect(nodeOf(h, first)).toMatchObject({
      state: "waiting",
      deferredAt: h.now,
      deferRetryAt: h.now + 60_000,
      deferrals: 1,
      message: "deferred: the update lock /run/lock held",
    });
    // Its slot went to the other node; the batch has no failure (threshold 0 still holds).
    expect(nodeOf(h, other).state).toBe("offered");
    expect(h.campaign.phase).toBe("running");
  });

  it("ends canceled when it defers after an abort, so the aborted campaign finishes", () => {
    const h = start(fleet(2), oneBatch({ concurrency: 1, maxDeferMs: 60 * MIN }));
    tick(h);
    const offered = fleet(2)
      .map((c) => c.id)
      .find((id) => nodeOf(h, id).state === "offered") as string;
    tick(h, [{ kind: "abort", rollback: false }]);
    expect(h.campaign.phase).toBe("aborted");
    expect(h.campaign.finishedAt).toBeUndefined();
    report(h, offered, "DEFERRED", "upgrade", busy);
    tick(h);
    expect(nodeOf(h, offered)).toMatchObject({ state: "canceled", code: "aborted" });
    expect(h.campaign.finishedAt).toBe(h.now);
  });

  it("asks for no wake at its retry time while the campaign is paused, and again once resumed", () => {
    const h = start(fleet(1), oneBatch({ maxDeferMs: 60 * MIN }));
    tick(h);
    report(h, A, "DEFERRED", "upgrade", busy);
    expect(tick(h).wakeAt).toBe(h.now + 60_000);
    const retryAt = nodeOf(h, A).deferRetryAt;
    // Paused, nothing is offered or skipped: neither its retry time nor its deferral's end is due.
    const paused = tick(h, [{ kind: "pause" }]);
    expect(h.campaign.phase).toBe("paused");
    expect(h.campaign.batches[0]?.state).toBe("running");
    expect(paused.wakeAt).toBeUndefined();
    const resumed = tick(h, [{ kind: "resume" }]);
    expect(h.campaign.phase).toBe("running");
    expect(resumed.wakeAt).toBe(retryAt);
  });

  it("is offered again only after its retry time, and succeeds when it takes the upgrade", () => {
    const h = start(fleet(1), oneBatch({ maxDeferMs: 60 * MIN }));
    tick(h);
    report(h, A, "DEFERRED", "upgrade", busy);
    const deferred = tick(h);
    expect(deferred.wakeAt).toBe(h.now + 60_000);
    advance(h, 59_999);
    expect(nodeOf(h, A).state).toBe("waiting");
    const again = advance(h, 1);
    expect(nodeOf(h, A).state).toBe("offered");
    expect(again.actions.filter((a) => a.kind === "upgrade")).toHaveLength(1);
    report(h, A, "RESTARTING");
    bringBack(h, [A], NEW);
    tick(h);
    tick(h);
    expect(nodeOf(h, A).state).toBe("succeeded");
    expect(nodeOf(h, A).deferredAt).toBeDefined();
  });

  it("ends skipped deferred at its first DEFERRED answer after max defer, never before, and the campaign completes", () => {
    const h = start(fleet(1), oneBatch({ maxDeferMs: 4 * MIN }));
    tick(h);
    const firstAt = h.now;
    for (;;) {
      report(h, A, "DEFERRED", "upgrade", busy);
      tick(h);
      const n = nodeOf(h, A);
      if (n.state === "skipped") break;
      expect(n.state).toBe("waiting");
      expect(h.now - firstAt).toBeLessThan(4 * MIN);
      h.now = n.deferRetryAt as number;
      tick(h);
      // Offered again, or skipped while waiting when its retry time is the deferral's end.
      if (nodeOf(h, A).state === "skipped") break;
      expect(nodeOf(h, A).state).toBe("offered");
    }
    expect(h.now - firstAt).toBeGreaterThanOrEqual(4 * MIN);
    expect(nodeOf(h, A)).toMatchObject({
      state: "skipped",
      code: "deferred",
      message:
        "deferred for 4 minutes or more (the campaign's max defer): the update lock /run/lock held",
    });
    tick(h);
    expect(h.campaign.phase).toBe("completed");
  });

  it("is skipped while it waits for a slot once its deferral ran out, and a max defer of 0 skips it at once", () => {
    const h = start(fleet(2), oneBatch({ concurrency: 1, maxDeferMs: 4 * MIN }));
    tick(h);
    const first = nodeOf(h, A).state === "offered" ? A : B;
    report(h, first, "DEFERRED", "upgrade", busy);
    tick(h);
    // The other node holds the only slot (it never answers) past the deferral's end.
    const ends = (nodeOf(h, first).deferredAt as number) + 4 * MIN;
    h.now = ends - 1;
    tick(h);
    expect(nodeOf(h, first).state).toBe("waiting");
    h.now = ends;
    tick(h);
    expect(nodeOf(h, first)).toMatchObject({ state: "skipped", code: "deferred" });

    const zero = start(fleet(1), oneBatch({ maxDeferMs: 0 }));
    tick(zero);
    report(zero, A, "DEFERRED", "upgrade", busy);
    tick(zero);
    expect(nodeOf(zero, A)).toMatchObject({ state: "skipped", code: "deferred" });
  });
});
