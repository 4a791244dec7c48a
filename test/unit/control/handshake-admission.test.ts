/**
 * Handshakes are admitted only as many as Control can finish in time: a Control starved of
 * CPU (or of its database) that kept admitting up to its fixed cap would hold handshakes
 * longer than Agents wait for their Welcome, so every one would be abandoned after its work
 * was done, and none welcomed. The admission follows the rate handshakes finish at.
 */
import { describe, expect, it } from "vitest";
import { HandshakeAdmission } from "../../../control/agents/handshake-admission.js";

function admission(max = 512) {
  let now = 1_000_000;
  const a = new HandshakeAdmission({
    maxConcurrent: max,
    minConcurrent: 16,
    targetMs: 5000,
    windowMs: 5000,
    now: () => now,
  });
  return {
    a,
    advance(ms: number) {
      now += ms;
    },
    /**
     * `count` handshakes end `everyMs` apart (welcomed unless told), each replaced by a new
     * one when the admission lets it.
     */
    steady(count: number, everyMs: number, welcomed = true) {
      for (let i = 0; i < count; i++) {
        a.release(welcomed);
        now += everyMs;
        a.tryAcquire();
      }
    },
    /** Admits as many as it will; returns how many. */
    fill(): number {
      let n = 0;
      while (a.tryAcquire()) n += 1;
      return n;
    },
  };
}

describe("handshake admission", () => {
  it("admits the minimum before any handshake has finished", () => {
    const { a, fill } = admission();
    expect(fill()).toBe(16);
    expect(a.held).toBe(16);
    expect(a.tryAcquire()).toBe(false);
  });

  it("admits what finishes within the target at the rate handshakes finish, up to the cap", () => {
    const { a, steady, fill } = admission();
    fill();
    // 100 handshakes finish per second, steadily, for five seconds.
    steady(500, 10);
    // 100/s × 5 s target = 500 at once.
    fill();
    expect(a.held).toBe(500);
    expect(a.limit).toBe(500);
  });

  it("never admits more than the cap, however fast handshakes finish", () => {
    const { a, steady, fill } = admission(64);
    fill();
    steady(5000, 1);
    fill();
    expect(a.held).toBe(64);
  });

  it("admits fewer when handshakes slow down, down to the minimum when none finish", () => {
    const { a, advance, steady, fill } = admission();
    fill();
    steady(500, 10);
    fill();
    expect(a.held).toBe(500);
    // Nothing finishes for a whole window: only the minimum, and 500 are held.
    advance(5000);
    expect(a.limit).toBe(16);
    expect(a.tryAcquire()).toBe(false);
    // Then 10 finish per second: 50 at once, and 450 are still held.
    for (let i = 0; i < 50; i++) {
      a.release();
      advance(100);
    }
    expect(a.limit).toBe(50);
    expect(a.held).toBe(450);
    expect(a.tryAcquire()).toBe(false);
  });

  it("remembers through a quiet spell what it finished while busy: a burst after an idle hour is admitted at that rate", () => {
    const { a, advance, steady, fill } = admission();
    fill();
    steady(500, 10);
    fill();
    expect(a.limit).toBe(500);
    // Every handshake ends, and none comes for an hour: idle time says nothing of capacity.
    while (a.held > 0) a.release(false);
    advance(3_600_000);
    expect(a.limit).toBe(500);
    expect(fill()).toBe(500);
  });

  it("ages what it finished by the time it was busy: held handshakes that finish nothing bring it down", () => {
    const { a, advance, steady, fill } = admission();
    fill();
    steady(500, 10);
    while (a.held > 0) a.release(false);
    advance(3_600_000);
    // One handshake is taken on and held (busy), and nothing finishes for a window of busy time.
    expect(a.tryAcquire()).toBe(true);
    advance(2500);
    expect(a.limit).toBe(250);
    advance(2500);
    expect(a.limit).toBe(16);
  });

  it("neither forgets nor invents busy time when the clock is set back", () => {
    const { a, advance, steady, fill } = admission();
    fill();
    steady(500, 10);
    advance(-10_000);
    expect(a.limit).toBe(500);
    // The spell counts again from the new now: a whole window later nothing recent is left.
    advance(5000);
    expect(a.limit).toBe(16);
  });

  it("does not count handshakes that ended without a Welcome: a flood of bad tokens admits no more", () => {
    const { a, steady, fill } = admission();
    fill();
    // 100 refused handshakes per second (bad tokens, silent streams) for five seconds.
    steady(500, 10, false);
    expect(a.limit).toBe(16);
    expect(fill()).toBe(0);
  });

  it("counts releases without acquires as nothing", () => {
    const { a, fill } = admission();
    a.release();
    expect(a.held).toBe(0);
    expect(fill()).toBe(16);
  });

  it("refuses options out of range, and an infinite target or window (with an infinite target the limit was no number, and nothing was refused)", () => {
    const base = {
      maxConcurrent: 8,
      minConcurrent: 4,
      targetMs: 1000,
      windowMs: 1000,
      now: () => 0,
    };
    const infinite = Number.POSITIVE_INFINITY;
    expect(() => new HandshakeAdmission(base)).not.toThrow();
    expect(() => new HandshakeAdmission({ ...base, minConcurrent: 0 })).toThrow(RangeError);
    expect(() => new HandshakeAdmission({ ...base, minConcurrent: 9 })).toThrow(RangeError);
    expect(() => new HandshakeAdmission({ ...base, targetMs: 0 })).toThrow(RangeError);
    expect(() => new HandshakeAdmission({ ...base, windowMs: 0 })).toThrow(RangeError);
    expect(() => new HandshakeAdmission({ ...base, targetMs: infinite })).toThrow(RangeError);
    expect(() => new HandshakeAdmission({ ...base, windowMs: infinite })).toThrow(RangeError);
  });
});

describe("handshake admission, the busy clock under a clock set back", () => {
  it("a clock set back within a long busy spell keeps the busy clock running: a Control turned slow is still seen within a window", () => {
    const { a, advance, steady, fill } = admission();
    fill();
    // Busy for an hour (a handshake always held), then 100 welcomed per second for a window.
    advance(3_600_000);
    steady(500, 10);
    expect(a.limit).toBe(500);
    // The clock is set back half an hour: still after the spell began.
    advance(-1_800_000);
    expect(a.limit).toBe(500);
    // Then nothing finishes for a whole window of busy time: only the minimum.
    advance(5000);
    expect(a.limit).toBe(16);
  });

  it("a clock set back by less than the spell so far loses none of the busy time after it", () => {
    const { a, advance, steady, fill } = admission();
    fill();
    advance(4000);
    steady(500, 10);
    advance(-2000);
    expect(a.limit).toBe(500);
    // 2.5 s of busy time later, half of the window's welcomes are left.
    advance(2500);
    expect(a.limit).toBe(250);
  });
});

describe("handshake admission, the price of silent streams at an idle Control", () => {
  it("silent streams that outlast a window of busy time bring the limit back to the minimum, which then hold every slot", () => {
    const { a, advance, steady, fill } = admission();
    fill();
    steady(500, 10);
    while (a.held > 0) a.release(false);
    advance(3_600_000);
    // The last rate is admitted: 500 silent streams are needed to hold every slot.
    expect(fill()).toBe(500);
    advance(5000);
    expect(a.limit).toBe(16);
    // They time out unwelcomed (the Hello timeout) and are renewed: 16 now hold every slot.
    advance(5000);
    while (a.held > 0) a.release(false);
    expect(fill()).toBe(16);
    expect(a.tryAcquire()).toBe(false);
  });
});
