/**
 * An idle leader asks the store little: with no campaign to decide, its periodic read of the
 * live campaigns runs every six intervals, not every interval, while a campaign it decides is
 * still re-decided every interval and a campaign whose wake-up never reached it is still found.
 * Counted through the store port on the manual clock (no wall time).
 */
import { describe, expect, it, vi } from "vitest";
import { world } from "./worker-world.js";

const INTERVAL = 5000;

/** Runs the worker's loop and moves the clock one second at a time for `seconds`. */
async function runFor(w: ReturnType<typeof world>, seconds: number) {
  const settle = async () => {
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
  };
  await settle();
  for (let s = 0; s < seconds; s++) {
    w.clock.advance(1000);
    await settle();
  }
}

describe("campaign worker at idle", () => {
  it("reads the live campaigns once per six intervals while it decides none", async () => {
    const w = world(["n1"]);
    const reads = vi.spyOn(w.store, "liveCampaignIds");
    const worker = w.worker();
    const stop = new AbortController();
    const running = worker.run(stop.signal);
    await runFor(w, 120);
    expect(worker.lease.epoch).toBe(1);
    // At the start (leadership gained), then at 30, 60, 90 and 120 s: 5 reads in two
    // minutes, where one per interval would be 25.
    expect(reads.mock.calls.length).toBeLessThanOrEqual(5);
    expect(reads.mock.calls.length).toBeGreaterThanOrEqual(4);
    stop.abort();
    w.clock.advance(1000);
    await running;
  });

  it("still finds, within six intervals, a campaign whose wake-up never reached it", async () => {
    const w = world(["n1"]);
    w.gateway.connect("n1");
    const worker = w.worker();
    const stop = new AbortController();
    const running = worker.run(stop.signal);
    await runFor(w, 1);
    // Written straight into the store: no wake, no notification.
    await w.start("c1", ["n1"]);
    await runFor(w, (6 * INTERVAL) / 1000);
    expect(w.gateway.sent.map((s) => s.id)).toEqual(["c1/n1/upgrade"]);
    stop.abort();
    w.clock.advance(1000);
    await running;
  });

  it("re-reads every interval while it decides a campaign", async () => {
    const w = world(["n1"]);
    w.gateway.connect("n1");
    const worker = w.worker();
    const stop = new AbortController();
    const running = worker.run(stop.signal);
    await runFor(w, 1);
    await w.start("c1", ["n1"]);
    worker.wake("c1");
    await runFor(w, 1);
    expect(w.gateway.sent.map((s) => s.id)).toEqual(["c1/n1/upgrade"]);
    const reads = vi.spyOn(w.store, "liveCampaignIds");
    // c1 waits for n1's report: tracked, so the safety net runs every interval.
    await runFor(w, 30);
    expect(reads.mock.calls.length).toBeGreaterThanOrEqual(5);
    stop.abort();
    w.clock.advance(1000);
    await running;
  });
});
