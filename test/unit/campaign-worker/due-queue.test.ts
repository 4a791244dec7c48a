import { describe, expect, it } from "vitest";
import { DueQueue } from "../../../control/campaign-worker/due-queue.js";

const live = (ids: string[]) => async () => ids;

describe("the worker's due-queue", () => {
  it("starts with every live campaign due, then only what was marked or whose time came", async () => {
    const q = new DueQueue();
    expect(await q.take(0, live(["a", "b"]))).toEqual(["a", "b"]);
    expect(q.hasDue).toBe(false);
    q.markDue("b");
    q.wakeAtTime("a", 100);
    expect(await q.take(50, live(["a", "b"]))).toEqual(["b"]);
    expect(q.nextWake()).toBe(100);
    expect(await q.take(100, live(["a", "b"]))).toEqual(["a"]);
  });

  it("keeps a wake time until it is replaced or cancelled, and forgets a campaign whole", async () => {
    const q = new DueQueue();
    await q.take(0, live([]));
    q.wakeAtTime("a", 10);
    q.wakeAtTime("a", 20);
    expect(q.nextWake()).toBe(20);
    q.wakeAtTime("a", undefined);
    expect(q.nextWake()).toBeUndefined();
    q.wakeAtTime("b", 5);
    q.markDue("b");
    q.forget("b");
    expect(q.nextWake()).toBeUndefined();
    expect(await q.take(100, live([]))).toEqual([]);
  });

  it("marks every live campaign due again after a reset (leadership changed hands)", async () => {
    const q = new DueQueue();
    await q.take(0, live(["a"]));
    q.wakeAtTime("a", 1000);
    q.reset();
    expect(q.nextWake()).toBeUndefined();
    expect(q.hasDue).toBe(true);
    expect(await q.take(1, live(["a", "c"]))).toEqual(["a", "c"]);
  });
});
