/**
 * Engine review R12: a pause that spans closed window time is subtracted twice from a batch's minimum
 * duration (batch-rules.ts `countedMs`: `elapsedMs` already drops the paused time, then
 * `closedMsBetween(windows, startedAt, end)` drops the closed time again, paused or not; the
 * TSDoc says so: "never overstates"). With a 2-hour nightly window the debt of one paused day
 * (22 closed hours) is paid back at 2 open hours a night: a batch whose minimum is 60 minutes,
 * paused for one day after 10 minutes, passes only about 11 days later instead of the next
 * night. SPEC §4: paused time does not count toward the minimum duration (it is not charged
 * twice); W2 asks only for the minimum of time inside the windows.
 */
import { describe, expect, it } from "vitest";
import { fleet, MIN, NEW, reboot, report, start, tick } from "./harness.js";
import { windowsOf } from "./windows-of.js";

const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

describe("a pause spanning closed window time is left out of the minimum once", () => {
  it("the batch passes the next night once 60 minutes inside the window were counted", () => {
    const t0 = Date.UTC(2031, 0, 1, 2, 0); // a window opens (02:00-04:00 UTC, every day)
    const h = start(fleet(1), {
      batches: [{ percent: 100, minDurationMs: 60 * MIN }],
      disruptionBudgetPercent: 100,
      windows: windowsOf("Mon-Sun 02:00-04:00 UTC"),
    });
    h.now = t0;
    h.campaign = {
      ...h.campaign,
      batches: h.campaign.batches.map((b) => ({ ...b, startedAt: t0 })),
    };
    tick(h);
    report(h, "node-000", "RESTARTING");
    reboot(h, "node-000", NEW);
    h.now = t0 + 5 * MIN;
    tick(h);
    // Paused at 02:10 for one day, resumed at 02:10 the next night.
    h.now = t0 + 10 * MIN;
    tick(h, [{ kind: "pause" }]);
    h.now = t0 + DAY + 10 * MIN;
    tick(h, [{ kind: "resume" }]);
    // Counted so far: 10 min on night 1. 50 more minutes inside the window: 03:00 on night 2.
    let passedAt: number | undefined;
    for (let t = h.now; t < t0 + 20 * DAY && passedAt === undefined; t += 10 * MIN) {
      h.now = t;
      tick(h);
      if (h.campaign.phase === "completed") passedAt = t;
    }
    expect(passedAt).toBeDefined();
    expect((passedAt as number) - t0).toBeLessThanOrEqual(DAY + 1 * HOUR + 10 * MIN);
  });

  it("weekly window, one-week pause: the batch passes an hour into the next window", () => {
    const t0 = Date.UTC(2031, 0, 4, 2, 0); // Saturday 2031-01-04 02:00 UTC
    const WEEK = 7 * DAY;
    const h = start(fleet(1), {
      batches: [{ percent: 100, minDurationMs: 60 * MIN }],
      disruptionBudgetPercent: 100,
      windows: windowsOf("Sat 02:00-04:00 UTC"),
    });
    h.now = t0;
    h.campaign = {
      ...h.campaign,
      batches: h.campaign.batches.map((b) => ({ ...b, startedAt: t0 })),
    };
    tick(h);
    report(h, "node-000", "RESTARTING");
    reboot(h, "node-000", NEW);
    h.now = t0 + 5 * MIN;
    tick(h);
    h.now = t0 + 10 * MIN;
    tick(h, [{ kind: "pause" }]);
    h.now = t0 + WEEK + 10 * MIN;
    tick(h, [{ kind: "resume" }]);
    let passedAt: number | undefined;
    for (let t = h.now; t < t0 + 20 * WEEK && passedAt === undefined; t += 10 * MIN) {
      h.now = t;
      tick(h);
      if (h.campaign.phase === "completed") passedAt = t;
    }
    expect(passedAt).toBeDefined();
    expect((passedAt as number) - t0).toBeLessThanOrEqual(WEEK + 1 * HOUR + 10 * MIN);
  }, 300_000);
});
