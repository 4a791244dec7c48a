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
