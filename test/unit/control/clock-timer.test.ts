/**
 * Timers on the injected clock fire when that clock's time passes their due time, never on
 * the wall clock, and never after they were cancelled.
 */
import { describe, expect, it } from "vitest";
import { scheduleEvery, scheduleOnce } from "../../../control/clock-timer.js";
import { ManualClock } from "../../../control/manual-clock.js";

const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("clock timers", () => {
  it("runs a one-shot timer when the manual clock reaches its due time, not before", async () => {
    const clock = new ManualClock(1000);
    const fired: number[] = [];
    scheduleOnce(clock, 500, () => fired.push(clock.ms));
    clock.advanceTo(1499);
    await settle();
    expect(fired).toEqual([]);
    clock.advanceTo(1500);
    await settle();
    expect(fired).toEqual([1500]);
    clock.advanceTo(5000);
    await settle();
    expect(fired).toEqual([1500]);
  });

  it("never runs a one-shot timer cancelled before its due time", async () => {
    const clock = new ManualClock(0);
    let fired = false;
    const timer = scheduleOnce(clock, 10, () => {
      fired = true;
    });
    timer.cancel();
    timer.cancel();
    clock.advance(100);
    await settle();
    expect(fired).toBe(false);
    expect(clock.nextDue()).toBeUndefined();
  });

  it("repeats every period of the manual clock until cancelled", async () => {
    const clock = new ManualClock(0);
    const fired: number[] = [];
    const timer = scheduleEvery(clock, 100, () => fired.push(clock.ms));
    for (let t = 50; t <= 350; t += 50) {
      clock.advanceTo(t);
      await settle();
    }
    expect(fired).toEqual([100, 200, 300]);
    timer.cancel();
    clock.advance(1000);
    await settle();
    expect(fired).toEqual([100, 200, 300]);
  });

  it("keeps repeating after a run that throws, reporting the error", async () => {
    const clock = new ManualClock(0);
    const errors: unknown[] = [];
    let runs = 0;
    scheduleEvery(
      clock,
      10,
      () => {
        runs += 1;
        throw new Error(`run ${runs}`);
      },
      (error) => errors.push((error as Error).message),
    );
    for (const t of [10, 20]) {
      clock.advanceTo(t);
      await settle();
    }
    expect(runs).toBe(2);
    expect(errors).toEqual(["run 1", "run 2"]);
  });
});
