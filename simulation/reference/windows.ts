/**
 * Reference model of maintenance windows, written apart from `control/campaign/windows.ts`:
 * a naive scan of local wall-clock time, one UTC minute at a time, each minute's weekday and
 * time of day read through `Intl.DateTimeFormat` with the window's `timeZone` (so daylight
 * saving comes from the runtime's tz data, the skipped and the repeated hour included). No
 * offsets are computed and no instant is derived from a local time: a local time that does not
 * exist is never visited, and one that exists twice is visited twice.
 *
 * Zone offsets of the dates scanned are whole minutes, so the open state is constant within
 * each UTC minute: integrating minute by minute is exact.
 */

/** A window as the model reads it (the same shape as the stored one). */
export interface RefWindow {
  readonly days: readonly number[];
  readonly startMinute: number;
  readonly endMinute: number;
  readonly timeZone: string;
}

const MINUTE = 60_000;
const WEEKDAYS: Readonly<Record<string, number>> = {
  Sun: 0,
  Mon: 1,
  Tue: 2,
  Wed: 3,
  Thu: 4,
  Fri: 5,
  Sat: 6,
};
const formats = new Map<string, Intl.DateTimeFormat>();
/** Wall clocks already read, by zone and UTC minute (a model may remember what it read). */
const readings = new Map<string, { day: number; minute: number }>();

/** The weekday (0 = Sunday) and minute of the day that the zone's wall clock shows at `t`. */
export function wallClock(timeZone: string, t: number): { day: number; minute: number } {
  const key = `${timeZone}|${Math.floor(t / MINUTE)}`;
  const known = readings.get(key);
  if (known !== undefined) return known;
  if (readings.size > 200_000) readings.clear();
  const reading = readWallClock(timeZone, t);
  readings.set(key, reading);
  return reading;
}

function readWallClock(timeZone: string, t: number): { day: number; minute: number } {
  let f = formats.get(timeZone);
  if (f === undefined) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone,
      weekday: "short",
      hour: "2-digit",
      minute: "2-digit",
      hourCycle: "h23",
    });
    formats.set(timeZone, f);
  }
  let day = -1;
  let hour = 0;
  let minute = 0;
  for (const p of f.formatToParts(new Date(t))) {
    if (p.type === "weekday") day = WEEKDAYS[p.value] ?? -1;
    if (p.type === "hour") hour = Number(p.value) % 24;
    if (p.type === "minute") minute = Number(p.value);
  }
  return { day, minute: hour * 60 + minute };
}

/** Whether one window is open at `t`: on one of its days, from its start to before its end. */
function refOpenIn(w: RefWindow, t: number): boolean {
  const { day, minute } = wallClock(w.timeZone, t);
  const yesterday = (day + 6) % 7;
  if (w.endMinute > w.startMinute)
    return w.days.includes(day) && w.startMinute <= minute && minute < w.endMinute;
  // Past midnight: the evening part belongs to today, the morning part to yesterday's window.
  if (w.days.includes(day) && minute >= w.startMinute) return true;
  return w.days.includes(yesterday) && minute < w.endMinute;
}

/** Whether any window is open at `t` (always, without windows). */
export function refWindowOpen(windows: readonly RefWindow[] | undefined, t: number): boolean {
  if (windows === undefined || windows.length === 0) return true;
  for (const w of windows) if (refOpenIn(w, t)) return true;
  return false;
}

/** Time in [a, b) outside every window, summed one UTC minute at a time. */
export function refClosedMs(
  windows: readonly RefWindow[] | undefined,
  a: number,
  b: number,
): number {
  if (windows === undefined || windows.length === 0 || b <= a) return 0;
  let closed = 0;
  let t = a;
  while (t < b) {
    const minuteEnd = Math.floor(t / MINUTE) * MINUTE + MINUTE;
    const until = Math.min(minuteEnd, b);
    if (!refWindowOpen(windows, Math.floor(t / MINUTE) * MINUTE)) closed += until - t;
    t = until;
  }
  return closed;
}

/**
 * The first UTC minute boundary after `t` at which the open state differs from the one at
 * `t`, scanning at most `horizonMinutes` minutes; undefined without windows or without a change.
 */
export function refNextChange(
  windows: readonly RefWindow[] | undefined,
  t: number,
  horizonMinutes = 10 * 24 * 60,
): number | undefined {
  if (windows === undefined || windows.length === 0) return undefined;
  const open = refWindowOpen(windows, t);
  let m = Math.floor(t / MINUTE) * MINUTE + MINUTE;
  for (let i = 0; i < horizonMinutes; i++, m += MINUTE) {
    if (refWindowOpen(windows, m) !== open) return m;
  }
  return undefined;
}
