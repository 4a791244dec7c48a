/**
 * The handshake admission against a reference model, under any interleaving of handshakes
 * taken on, ended (welcomed or not) and a clock stepping forward and back: the limit stays
 * within [minConcurrent, maxConcurrent], what is held never goes negative nor past the limit
 * when taken, and the limit is what finishes within the target at the rate welcomed over the
 * last window of busy time (the sum of the clock's steps forward while a handshake is held).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { HandshakeAdmission } from "../../../control/agents/handshake-admission.js";

type Op =
  | { kind: "acquire" }
  | { kind: "release"; welcomed: boolean }
  | { kind: "advance"; ms: number }
  | { kind: "limit" }
  | { kind: "burst"; count: number };

const ops: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.constant<Op>({ kind: "acquire" }), weight: 6 },
  { arbitrary: fc.boolean().map<Op>((welcomed) => ({ kind: "release", welcomed })), weight: 4 },
  {
    arbitrary: fc
      .oneof(
        fc.integer({ min: 0, max: 50 }),
        fc.integer({ min: -20_000, max: 20_000 }),
        fc.integer({ min: -200, max: 500 }),
      )
      .map<Op>((ms) => ({ kind: "advance", ms })),
    weight: 3,
  },
  { arbitrary: fc.constant<Op>({ kind: "limit" }), weight: 1 },
  {
    arbitrary: fc.integer({ min: 1, max: 200 }).map<Op>((count) => ({ kind: "burst", count })),
    weight: 1,
  },
);

const options = fc
  .record({
    maxConcurrent: fc.integer({ min: 1, max: 40 }),
    minFraction: fc.double({ min: 0, max: 1, noNaN: true }),
    targetMs: fc.integer({ min: 1, max: 10_000 }),
    windowMs: fc.integer({ min: 1, max: 10_000 }),
  })
  .map(({ minFraction, ...o }) => ({
    ...o,
    minConcurrent: Math.max(1, Math.ceil(minFraction * o.maxConcurrent)),
  }));

/** The reference: every welcome kept, busy time summed from the clock's steps forward. */
class Model {
  held = 0;
  busy = 0;
  lastRead = 0;
  welcomes: number[] = [];
  constructor(
    readonly o: {
      maxConcurrent: number;
      minConcurrent: number;
      targetMs: number;
      windowMs: number;
    },
    readonly now: () => number,
  ) {}
  read(): void {
    if (this.held === 0) return;
    const now = this.now();
    this.busy += Math.max(0, now - this.lastRead);
    this.lastRead = now;
  }
  limit(): number {
    this.read();
    const since = this.busy - this.o.windowMs;
    const keep = Math.ceil((this.o.maxConcurrent * this.o.windowMs) / this.o.targetMs);
    const recent = Math.min(keep, this.welcomes.filter((t) => t >= since).length);
    const inTarget = Math.ceil((recent * this.o.targetMs) / this.o.windowMs);
    return Math.min(this.o.maxConcurrent, Math.max(this.o.minConcurrent, inTarget));
  }
  acquire(): boolean {
    if (this.held >= this.limit()) return false;
    if (this.held === 0) this.lastRead = this.now();
    this.held += 1;
    return true;
  }
  release(welcomed: boolean): void {
    if (this.held === 0) return;
    this.read();
    this.held -= 1;
    if (welcomed) this.welcomes.push(this.busy);
  }
}

/**
 * A clock set back by less than the busy spell so far, then run on: the busy time after it
 * counts (it once stalled until the clock had caught up, freezing the rate).
 */
const SET_BACK_WITHIN_A_SPELL: [
  { maxConcurrent: number; minConcurrent: number; targetMs: number; windowMs: number },
  Op[],
] = [
  { maxConcurrent: 40, minConcurrent: 2, targetMs: 1000, windowMs: 1000 },
  [
    { kind: "acquire" },
    { kind: "advance", ms: 3000 },
    { kind: "burst", count: 20 },
    { kind: "advance", ms: -2000 },
    { kind: "advance", ms: 1500 },
  ],
];

describe("handshake admission against a reference model", () => {
  it("keeps to the model and its bounds under any interleaving and any clock steps", () => {
    fc.assert(
      fc.property(options, fc.array(ops, { maxLength: 300 }), (o, sequence) => {
        let now = 1_700_000_000_000;
        const a = new HandshakeAdmission({ ...o, now: () => now });
        const m = new Model(o, () => now);
        const step = (op: Op): void => {
          switch (op.kind) {
            case "acquire": {
              const before = a.held;
              const took = a.tryAcquire();
              expect(took).toBe(m.acquire());
              expect(a.held).toBe(before + (took ? 1 : 0));
              expect(a.held).toBeLessThanOrEqual(o.maxConcurrent);
              break;
            }
            case "release":
              a.release(op.welcomed);
              m.release(op.welcomed);
              break;
            case "advance":
              now += op.ms;
              break;
            case "limit":
              break;
            case "burst":
              for (let i = 0; i < op.count; i++) {
                step({ kind: "acquire" });
                now += 1;
                step({ kind: "release", welcomed: true });
              }
              break;
          }
          expect(a.held).toBe(m.held);
          expect(a.held).toBeGreaterThanOrEqual(0);
          const limit = a.limit;
          expect(limit).toBe(m.limit());
          expect(limit).toBeGreaterThanOrEqual(o.minConcurrent);
          expect(limit).toBeLessThanOrEqual(o.maxConcurrent);
        };
        for (const op of sequence) step(op);
      }),
      { numRuns: 300, examples: [SET_BACK_WITHIN_A_SPELL] },
    );
  });

  it("is never raised by handshakes that end without a Welcome, whatever the clock does", () => {
    fc.assert(
      fc.property(
        options,
        fc.array(fc.tuple(fc.integer({ min: -5000, max: 5000 }), fc.boolean()), { maxLength: 200 }),
        (o, sequence) => {
          let now = 1_700_000_000_000;
          const a = new HandshakeAdmission({ ...o, now: () => now });
          // A rate measured first, then only refusals and clock steps.
          for (let i = 0; i < 100; i++) {
            a.tryAcquire();
            now += 7;
            a.release(true);
          }
          let last = a.limit;
          for (const [ms, acquire] of sequence) {
            now += ms;
            if (acquire) a.tryAcquire();
            else a.release(false);
            const limit = a.limit;
            expect(limit).toBeLessThanOrEqual(last);
            last = limit;
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
