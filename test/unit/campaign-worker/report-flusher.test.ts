/**
 * The report flusher (`control/campaign-worker/report-flusher.ts`) on the manual clock: a
 * report is written at once when no write runs, what arrives during a write goes in one write
 * right after it, and two writes start at least MIN_WRITE_GAP_MS apart. A buffer of reports
 * stands in for the intake; its writes are held open by hand.
 */
import { afterEach, describe, expect, it } from "vitest";
import {
  MIN_WRITE_GAP_MS,
  runReportFlusher,
} from "../../../control/campaign-worker/report-flusher.js";
import { Waker } from "../../../control/campaign-worker/waker.js";
import { ManualClock } from "../../../control/manual-clock.js";

/** Buffered reports whose writes stay open until `finish` is called. */
class HeldReports {
  buffered: string[] = [];
  /** Each write: the reports it took and when it started (clock ms). */
  readonly writes: { reports: string[]; at: number; done: boolean }[] = [];
  private finishers: (() => void)[] = [];

  constructor(
    private readonly clock: ManualClock,
    private readonly waker: Waker,
  ) {}

  get pending(): boolean {
    return this.buffered.length > 0;
  }

  /** An agent's report arrives (the intake buffers it and wakes the flusher). */
  arrive(...ids: string[]): void {
    this.buffered.push(...ids);
    this.waker.wake();
  }

  flush(): Promise<void> {
    const write = { reports: this.buffered, at: this.clock.ms, done: false };
    this.buffered = [];
    this.writes.push(write);
    return new Promise((resolve) =>
      this.finishers.push(() => {
        write.done = true;
        resolve();
      }),
    );
  }

  /** Ends the oldest open write. */
  finish(): void {
    this.finishers.shift()?.();
  }
}

const settle = async () => {
  for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
};

const stops: AbortController[] = [];
afterEach(() => {
  for (const stop of stops.splice(0)) stop.abort();
});

function start() {
  const clock = new ManualClock(1_000_000);
  const waker = new Waker();
  const reports = new HeldReports(clock, waker);
  const stop = new AbortController();
  stops.push(stop);
  const running = runReportFlusher({ clock, reports, waker }, stop.signal);
  return { clock, reports, stop, running };
}

describe("report flusher", () => {
  it("writes a report at once when no write runs, without the clock moving", async () => {
    const { reports } = start();
    await settle();
    reports.arrive("r1");
    await settle();
    expect(reports.writes).toEqual([{ reports: ["r1"], at: 1_000_000, done: false }]);
  });

  it("writes the reports of one turn of the event loop together", async () => {
    const { reports } = start();
    await settle();
    reports.arrive("r1");
    reports.arrive("r2");
    reports.arrive("r3");
    await settle();
    expect(reports.writes.map((w) => w.reports)).toEqual([["r1", "r2", "r3"]]);
  });

  it("puts what arrives during a write into one write right after it", async () => {
    const { clock, reports } = start();
    await settle();
    reports.arrive("r1");
    await settle();
    clock.advance(40);
    reports.arrive("r2");
    await settle();
    clock.advance(40);
    reports.arrive("r3");
    await settle();
    // The first write is still open: nothing else was written.
    expect(reports.writes.map((w) => w.reports)).toEqual([["r1"]]);
    reports.finish();
    await settle();
    expect(reports.writes.map((w) => [w.reports, w.at])).toEqual([
      [["r1"], 1_000_000],
      [["r2", "r3"], 1_000_080],
    ]);
  });

  it("starts two writes at least the gap apart", async () => {
    const { clock, reports } = start();
    await settle();
    reports.arrive("r1");
    await settle();
    reports.finish();
    await settle();
    reports.arrive("r2");
    await settle();
    // Written at once, the first write only just ended: r2 waits for the gap.
    expect(reports.writes).toHaveLength(1);
    clock.advance(MIN_WRITE_GAP_MS - 1);
    await settle();
    expect(reports.writes).toHaveLength(1);
    clock.advance(1);
    await settle();
    expect(reports.writes.map((w) => [w.reports, w.at])).toEqual([
      [["r1"], 1_000_000],
      [["r2"], 1_000_000 + MIN_WRITE_GAP_MS],
    ]);
  });

  it("waits for an event with nothing buffered, and ends when stopped", async () => {
    const { clock, reports, stop, running } = start();
    await settle();
    clock.advance(60_000);
    await settle();
    expect(reports.writes).toEqual([]);
    expect(clock.nextDue()).toBeUndefined();
    stop.abort();
    await running;
  });

  it("goes on after a failed write, with the reports it kept", async () => {
    const { clock, reports } = start();
    await settle();
    const flush = reports.flush.bind(reports);
    let failures = 1;
    // As the intake: a failed write keeps its reports for the next one.
    reports.flush = () => (failures-- > 0 ? Promise.reject(new Error("database down")) : flush());
    reports.arrive("r1");
    await settle();
    reports.arrive("r2");
    clock.advance(MIN_WRITE_GAP_MS);
    await settle();
    expect(reports.writes.map((w) => w.reports)).toEqual([["r1", "r2"]]);
  });
});
