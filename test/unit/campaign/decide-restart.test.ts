/**
 * A restart unrelated to the upgrade: a node that crashed before it received its offer comes
 * back on its old version without ever reporting on the upgrade. It is offered again (the outbox
 * re-sends the unacknowledged upgrade when it reconnects), not failed `reverted`.
 */
import { describe, expect, it } from "vitest";
import {
  fleet,
  goOffline,
  MIN,
  nodeOf,
  OLD,
  reboot,
  report,
  sent,
  start,
  tick,
} from "./harness.js";

const one = [{ percent: 100, minDurationMs: 0 }];
const id = "node-000";

function offered() {
  const h = start(fleet(1), { batches: one, failureThresholdPercent: 100 });
  tick(h);
  return { h, offer: nodeOf(h, id) };
}

describe("a restart before the offer was acknowledged", () => {
  it("keeps the node offered with its new boot id, the same operation and deadline, and sends nothing", () => {
    const { h, offer } = offered();
    h.now += MIN;
    goOffline(h, id);
    reboot(h, id, OLD);
    const d = tick(h);
    expect(nodeOf(h, id)).toMatchObject({
      state: "offered",
      code: undefined,
      offerBootId: h.facts.get(id)?.bootId,
      upgradeOperationId: offer.upgradeOperationId,
      reconnectDeadline: offer.reconnectDeadline,
      offeredAt: offer.offeredAt,
    });
    expect(d.actions).toEqual([]);
    expect(d.reasons).toEqual([
      `node ${id}: offered → offered: restarted before acknowledging the offer; offered again`,
    ]);
    expect(sent(h, "upgrade")).toEqual([id]);
    expect(tick(h).changes.nodes).toEqual([]);
  });

  it("still times out a node that keeps restarting without acknowledging the offer", () => {
    const { h } = offered();
    for (let i = 0; i < 9; i++) {
      h.now += MIN;
      reboot(h, id, OLD);
      tick(h);
      expect(nodeOf(h, id).state).toBe("offered");
    }
    h.now = 10 * MIN;
    tick(h);
    expect(nodeOf(h, id)).toMatchObject({ state: "failed", code: "reconnect_timeout" });
  });

  it("judges the offer as usual once the agent reports on it after the restart", () => {
    const { h } = offered();
    reboot(h, id, OLD);
    tick(h);
    report(h, id, "ACCEPTED");
    tick(h);
    expect(nodeOf(h, id).state).toBe("applying");
    reboot(h, id, OLD);
    tick(h);
    expect(nodeOf(h, id)).toMatchObject({ state: "failed", code: "reverted" });
  });

  it("judges a report from the boot after the restart as progress, whenever the decision sees it", () => {
    // The agent restarted before the offer reached it, the outbox re-sent the offer, and the
    // agent acknowledged it on its new boot before any decision ran (a slow database, a
    // restarted Control): that is the re-sent offer in progress, not a revert.
    const { h } = offered();
    reboot(h, id, OLD);
    report(h, id, "ACCEPTED");
    tick(h);
    expect(nodeOf(h, id)).toMatchObject({
      state: "applying",
      offerBootId: h.facts.get(id)?.bootId,
    });
  });
});
