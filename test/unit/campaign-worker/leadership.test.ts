import { describe, expect, it } from "vitest";
import type { LeaderLease } from "../../../control/campaign-store/index.js";
import { Leadership } from "../../../control/campaign-worker/leadership.js";

function fakeLease(answers: boolean[]): LeaderLease & { ticks: number } {
  const lease = {
    name: "l",
    holder: "me",
    epoch: undefined,
    ticks: 0,
    async tick() {
      lease.ticks++;
      return answers.shift() ?? false;
    },
    async fence() {},
    async release() {},
  };
  return lease;
}

describe("the worker's leadership", () => {
  it("ticks the lease every third of its TTL and says when it was gained and lost", async () => {
    const lease = fakeLease([false, true, true, false]);
    const l = new Leadership(lease, 3000);
    expect(await l.tick(0)).toBe("none");
    expect(l.nextTick).toBe(1000);
    expect(await l.tick(500)).toBe("none");
    expect(lease.ticks).toBe(1);
    expect(await l.tick(1000)).toBe("gained");
    expect(l.leading).toBe(true);
    expect(l.readyAt).toBe(1000);
    expect(await l.tick(2000)).toBe("none");
    expect(await l.tick(3000)).toBe("lost");
    expect(l.leading).toBe(false);
  });

  it("after a refused write, stops leading and ticks the lease again at once", async () => {
    const lease = fakeLease([true, true]);
    const l = new Leadership(lease, 3000);
    await l.tick(0);
    l.lost();
    expect(l.leading).toBe(false);
    expect(await l.tick(1)).toBe("gained");
    expect(l.readyAt).toBe(1);
  });
});

// One clock for ordering across Controls (docs/decisions.md): deadlines are the leader's, from
// when it saw what they follow; a step of its wall clock is no time passing for the nodes.
describe("a step of the leader's wall clock", () => {
  it("moves readyAt to the tick after the wall clock ran more than a TTL ahead of real time, and says so once", async () => {
    const lease = fakeLease([true, true, true, true, true]);
    const l = new Leadership(lease, 3000);
    expect(await l.tick(0, 0)).toBe("gained");
    expect(await l.tick(1000, 1000)).toBe("none");
    // A process that stood still for 15 minutes: time passed, nothing moves.
    expect(await l.tick(901_000, 901_000)).toBe("none");
    // The wall clock a whole TTL ahead of real time: not yet a step.
    expect(await l.tick(905_000, 902_000)).toBe("none");
    expect(l.readyAt).toBe(0);
    expect(l.takeStep()).toBeUndefined();
    // The wall clock steps 15 minutes forward while 1 s passes.
    expect(await l.tick(905_000 + 900_000 + 1000, 903_000)).toBe("none");
    expect(l.leading).toBe(true);
    expect(l.readyAt).toBe(1_806_000);
    expect(l.takeStep()).toEqual({ at: 1_806_000, ms: 900_000 });
    expect(l.takeStep()).toBeUndefined();
  });

  it("cannot tell a step without the Clock's monotonic reading, and moves nothing", async () => {
    const lease = fakeLease([true, true]);
    const l = new Leadership(lease, 3000);
    await l.tick(0);
    await l.tick(900_000);
    expect(l.readyAt).toBe(0);
    expect(l.takeStep()).toBeUndefined();
  });

  it("ticks the lease at once when the clock went back, not a step's length later", async () => {
    const lease = fakeLease([true, true, true]);
    const l = new Leadership(lease, 3000);
    await l.tick(1_000_000, 0);
    expect(l.nextTick).toBe(1_001_000);
    // Stepped back an hour: the lease is renewed now, and next a third of the TTL from now.
    await l.tick(1_000_000 - 3_600_000 + 500, 500);
    expect(lease.ticks).toBe(2);
    expect(l.nextTick).toBe(1_000_000 - 3_600_000 + 1500);
    expect(l.readyAt).toBe(1_000_000);
  });
});
