/**
 * The report flusher (`control/campaign-worker/report-flusher.ts`) on the manual clock: a
 * report is written at once when no write runs, what arrives during a write goes in one write
 * right after it, two writes start at least MIN_WRITE_GAP_MS apart (and no further apart when
 * the wall clock steps back), and a failed write is tried again a second later. A buffer of
 * reports stands in for the intake, its writes held open by hand; one test runs the real intake
 * over a database that refuses every write.
 */
import { create } from "@bufbuild/protobuf";
import { afterEach, describe, expect, it } from "vitest";
import { EventIntake } from "../../../control/campaign-worker/intake.js";
import {
  MIN_WRITE_GAP_MS,
  RETRY_AFTER_FAILURE_MS,
  runReportFlusher,
} from "../../../control/campaign-worker/report-flusher.js";
import { Waker } from "../../../control/campaign-worker/waker.js";
import type { Clock } from "../../../control/clock.js";
import { createLogger } from "../../../control/log.js";
import { ManualClock } from "../../../control/manual-clock.js";
import {
  ObservedStateSchema,
  OperationPhase,
} from "../../../proto/gen/agentcontrol/v1/agent_control_pb.js";

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
  const failures: unknown[] = [];
  const running = runReportFlusher(
    { clock, reports, waker, failed: (error) => failures.push(error) },
    stop.signal,
  );
  return { clock, reports, stop, running, failures };
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

  it("tries a failed write again a second later, with the reports it kept, and says so", async () => {
    const { clock, reports, failures } = start();
    await settle();
    const flush = reports.flush.bind(reports);
    let refusals = 1;
    // As the intake: a failed write keeps its reports for the next one.
    reports.flush = () => (refusals-- > 0 ? Promise.reject(new Error("database down")) : flush());
    reports.arrive("r1");
    await settle();
    expect(failures).toEqual([new Error("database down")]);
    reports.arrive("r2");
    clock.advance(RETRY_AFTER_FAILURE_MS - 1);
    await settle();
    expect(reports.writes).toEqual([]);
    clock.advance(1);
    await settle();
    expect(reports.writes.map((w) => w.reports)).toEqual([["r1", "r2"]]);
  });

  it("asks a database that keeps refusing once a second, as the worker's own retries", async () => {
    // The real intake keeps the reports of a failed write, so they stay pending.
    const clock = new ManualClock(1_000_000);
    const waker = new Waker();
    let attempts = 0;
    const intake = new EventIntake({
      store: {
        recordFacts: async () => {
          attempts++;
          throw new Error("database down");
        },
      },
      log: createLogger({ level: "silent" }),
      campaignOfNode: () => undefined,
      bootIdOf: () => "boot-1",
      touched: () => {},
      connected: () => {},
    });
    const stop = new AbortController();
    stops.push(stop);
    const failures: unknown[] = [];
    const running = runReportFlusher(
      { clock, reports: intake, waker, failed: (e) => failures.push(e) },
      stop.signal,
    );
    await settle();
    intake.handle({
      kind: "observed",
      nodeId: "n1",
      observed: create(ObservedStateSchema, {
        operationId: "c1/n1/upgrade",
        phase: OperationPhase.DOWNLOADING,
        version: "2.0.0",
      }),
      at: new Date(clock.ms),
    });
    waker.wake();
    await settle();
    // Ten seconds of the clock, ten milliseconds at a time.
    for (let ms = 0; ms < 10_000; ms += 10) {
      clock.advance(10);
      await settle();
    }
    expect(attempts).toBe(11);
    expect(failures).toHaveLength(11);
    stop.abort();
    await running;
  });

  it("waits no longer than the gap when the wall clock steps back", async () => {
    // Control's clock is the wall clock, which an NTP step can move back; its sleeps are
    // monotonic timers.
    const manual = new ManualClock(1_000_000);
    let step = 0;
    const clock: Clock = {
      now: () => new Date(manual.ms + step),
      sleep: (ms, signal) => manual.sleep(ms, signal),
    };
    const waker = new Waker();
    const reports = new HeldReports(manual, waker);
    const stop = new AbortController();
    stops.push(stop);
    void runReportFlusher({ clock, reports, waker, failed: () => {} }, stop.signal);
    await settle();
    reports.arrive("r1");
    await settle();
    reports.finish();
    step = -60_000;
    reports.arrive("r2");
    await settle();
    manual.advance(MIN_WRITE_GAP_MS);
    await settle();
    expect(reports.writes.map((w) => w.reports)).toEqual([["r1"], ["r2"]]);
  });
});
