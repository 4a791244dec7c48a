/**
 * Maintenance windows: when a campaign may offer upgrades. A window is a set of weekdays and a
 * span of wall-clock time in one IANA time zone (`Mon-Fri 02:00-04:00 Europe/Berlin`). Pure
 * functions of the windows and an instant; time zones come from `Intl` (the runtime's tz data,
 * `zone-clock.ts`), so a window follows its zone's daylight-saving changes. The wall clock
 * decides: a window is open while its zone's clock shows a day and time inside its span. An
 * edge whose time the zone skips (clocks set forward) takes effect when the clock jumps past it;
 * where the zone repeats an hour (clocks set back), the window is open each time the clock shows
 * a time inside its span and closed while it shows one outside.
 *
 * A campaign without windows is always open. Outside every window of its campaign nothing new
 * is offered, nodes in flight are still judged, and closed time does not count toward a
 * batch's minimum duration or soak ({@link closedMsBetween}).
 */

import { boundedMemo } from "./bounded-memo.js";
import { DAY_MS, instantsShowing, localMs, offsetChangeNear } from "./zone-clock.js";

/** One maintenance window, as stored. */
export interface MaintenanceWindow {
  /** Weekdays on which the window opens, 0 = Sunday … 6 = Saturday, ascending, unique. */
  readonly days: readonly number[];
  /** Opening, minutes after local midnight (0…1439). */
  readonly startMinute: number;
  /**
   * Closing, minutes after local midnight (1…1440). At or before `startMinute` the window runs
   * past midnight and closes on the next day (`22:00-02:00`).
   */
  readonly endMinute: number;
  /** IANA time zone ("UTC" when the text names none). */
  readonly timeZone: string;
}

/** The outcome of {@link parseWindow}. */
export type WindowParse =
  | { readonly ok: true; readonly window: MaintenanceWindow }
  | { readonly ok: false; readonly message: string };

const DAY_NAMES = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"] as const;
const LONG_DAY_NAMES = [
  "sunday",
  "monday",
  "tuesday",
  "wednesday",
  "thursday",
  "friday",
  "saturday",
];
const MINUTE_MS = 60_000;

function dayOf(name: string): number | undefined {
  const lower = name.toLowerCase();
  const short = DAY_NAMES.indexOf(lower as (typeof DAY_NAMES)[number]);
  if (short >= 0) return short;
  const long = LONG_DAY_NAMES.indexOf(lower);
  return long >= 0 ? long : undefined;
}

function parseDays(text: string): number[] | string {
  const lower = text.toLowerCase();
  if (lower === "daily" || lower === "*") return [0, 1, 2, 3, 4, 5, 6];
  if (lower === "weekdays") return [1, 2, 3, 4, 5];
  if (lower === "weekends") return [0, 6];
  const days = new Set<number>();
  for (const part of text.split(",")) {
    const [from, to, extra] = part.split("-");
    const a = from === undefined ? undefined : dayOf(from.trim());
    const b = to === undefined ? a : dayOf(to.trim());
    if (extra !== undefined || a === undefined || b === undefined) {
      return `"${part}" is not a day or a range of days (Mon, Tue-Fri, Sat,Sun, daily)`;
    }
    // A range wraps past Saturday: Fri-Mon is Fri, Sat, Sun, Mon.
    for (let d = a; ; d = (d + 1) % 7) {
      days.add(d);
      if (d === b) break;
    }
  }
  return [...days].sort((x, y) => x - y);
}

function parseClock(text: string, end: boolean): number | undefined {
  const m = /^(\d{1,2}):(\d{2})$/.exec(text);
  if (m === null) return undefined;
  const h = Number(m[1]);
  const min = Number(m[2]);
  if (min > 59) return undefined;
  if (h === 24 && min === 0 && end) return 1440;
  if (h > 23) return undefined;
  return h * 60 + min;
}

/** True when `timeZone` is an IANA zone the runtime knows. */
export function isTimeZone(timeZone: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone });
    return true;
  } catch {
    return false;
  }
}

/**
 * Parses `[DAYS] HH:MM-HH:MM [ZONE]`: DAYS is `daily` (the default), `weekdays`, `weekends`, or
 * comma-separated days and ranges (`Mon-Fri`, `Sat,Sun`, `Fri-Mon`); the span may end at 24:00
 * and may run past midnight (`22:00-02:00`, closing the next day); ZONE is an IANA time zone
 * (default UTC). A span of zero length is refused.
 */
export function parseWindow(text: string): WindowParse {
  const parts = text.trim().split(/\s+/);
  const fail = (why: string): WindowParse => ({
    ok: false,
    message: `window "${text.trim()}": ${why}; expected [DAYS] HH:MM-HH:MM [TIME_ZONE], e.g. "Mon-Fri 02:00-04:00 Europe/Berlin"`,
  });
  const spanAt = parts.findIndex((p) => /^\d{1,2}:\d{2}-\d{1,2}:\d{2}$/.test(p));
  if (spanAt < 0) return fail("no HH:MM-HH:MM span");
  if (spanAt > 1 || parts.length > spanAt + 2) return fail("unexpected words");
  const days = spanAt === 1 ? parseDays(parts[0] as string) : parseDays("daily");
  if (typeof days === "string") return fail(days);
  const [from, to] = (parts[spanAt] as string).split("-") as [string, string];
  const startMinute = parseClock(from, false);
  const endMinute = parseClock(to, true);
  if (startMinute === undefined) return fail(`"${from}" is not a time from 00:00 to 23:59`);
  if (endMinute === undefined) return fail(`"${to}" is not a time from 00:00 to 24:00`);
  if (startMinute === endMinute % 1440 && endMinute !== 1440)
    return fail("the span has no length (it opens when it closes)");
  const timeZone = parts[spanAt + 1] ?? "UTC";
  if (!isTimeZone(timeZone)) return fail(`"${timeZone}" is not a time zone`);
  return { ok: true, window: { days, startMinute, endMinute, timeZone } };
}

const hhmm = (minute: number): string =>
  `${String(Math.floor(minute / 60)).padStart(2, "0")}:${String(minute % 60).padStart(2, "0")}`;

/** The canonical text of a window (parses back to the same window). */
export function formatWindow(w: MaintenanceWindow): string {
  const names = (d: number) => {
    const n = DAY_NAMES[d] as string;
    return n.charAt(0).toUpperCase() + n.slice(1);
  };
  let days: string;
  if (w.days.length === 7) days = "daily";
  else {
    // In the order of an operator's week, Monday first (Sat,Sun, never Sun,Sat), with runs of
    // three or more consecutive days as ranges.
    const week = [...w.days].sort((x, y) => ((x + 6) % 7) - ((y + 6) % 7));
    const runs: string[] = [];
    let i = 0;
    while (i < week.length) {
      let j = i;
      while (j + 1 < week.length && (week[j + 1] as number) === ((week[j] as number) + 1) % 7) j++;
      const a = week[i] as number;
      const b = week[j] as number;
      runs.push(
        j - i >= 2
          ? `${names(a)}-${names(b)}`
          : week
              .slice(i, j + 1)
              .map(names)
              .join(","),
      );
      i = j + 1;
    }
    days = runs.join(",");
  }
  return `${days} ${hhmm(w.startMinute)}-${hhmm(w.endMinute)} ${w.timeZone}`;
}

const weekday = (dayStart: number): number => new Date(dayStart).getUTCDay();

/** The local times at which `w` opens and closes on the local day starting at `dayStart`. */
function spanOn(w: MaintenanceWindow, dayStart: number): readonly [number, number] {
  const end = w.endMinute > w.startMinute ? w.endMinute : w.endMinute + 1440;
  return [dayStart + w.startMinute * MINUTE_MS, dayStart + end * MINUTE_MS];
}

/**
 * True when the zone's wall clock at `t` shows a time inside a span of `w`: today's, or
 * yesterday's where it runs past midnight.
 */
function openIn(w: MaintenanceWindow, t: number): boolean {
  const local = localMs(w.timeZone, t);
  const today = Math.floor(local / DAY_MS) * DAY_MS;
  for (const dayStart of [today - DAY_MS, today]) {
    if (!w.days.includes(weekday(dayStart))) continue;
    const [opens, closes] = spanOn(w, dayStart);
    if (opens <= local && local < closes) return true;
  }
  return false;
}

/** True when `t` lies in at least one window; always true without windows. */
export function windowOpen(windows: readonly MaintenanceWindow[] | undefined, t: number): boolean {
  if (windows === undefined || windows.length === 0) return true;
  return windows.some((w) => openIn(w, t));
}

/** Local days around `t` whose spans {@link nextWindowChange} reads: yesterday to a week on. */
const FIRST_DAY = -1;
const LAST_DAY = 8;

/**
 * Every instant near the local day starting at `today` (in `w`'s zone) at which `w`'s open
 * state can change: each instant the wall clock shows an opening or a closing of its spans on
 * local days {@link FIRST_DAY}…{@link LAST_DAY}, and each change of the zone's offset near one
 * (the clock jumps into or out of a span there).
 */
function edges(w: MaintenanceWindow, today: number): number[] {
  const out: number[] = [];
  for (let k = FIRST_DAY; k <= LAST_DAY; k++) {
    const dayStart = today + k * DAY_MS;
    if (!w.days.includes(weekday(dayStart))) continue;
    for (const local of spanOn(w, dayStart)) {
      for (const at of instantsShowing(w.timeZone, local)) out.push(at);
      const change = offsetChangeNear(w.timeZone, local);
      if (change !== undefined) out.push(change);
    }
  }
  return out;
}

/** The start of the local day that `w`'s zone shows at `t`, on the local time line. */
const localDayOf = (w: MaintenanceWindow, t: number): number =>
  Math.floor(localMs(w.timeZone, t) / DAY_MS) * DAY_MS;

/** The candidate instants of {@link nextWindowChange}, ascending, and the open state at each. */
interface Candidates {
  readonly at: readonly number[];
  readonly openAt: readonly boolean[];
}

/**
 * The edges of every window around the local days `todays` (one per window, in order), with
 * the windows' open state at each. A pure function of its arguments: every instant of one
 * local day (per window) shares it, so it is remembered.
 */
const candidatesAround = boundedMemo(
  (windows: readonly MaintenanceWindow[], todays: readonly number[]): Candidates => {
    const at = windows.flatMap((w, i) => edges(w, todays[i] as number)).sort((x, y) => x - y);
    return { at, openAt: at.map((c) => windowOpen(windows, c)) };
  },
  (windows, todays) =>
    windows
      .map((w, i) => `${w.days}/${w.startMinute}/${w.endMinute}/${w.timeZone}@${todays[i]}`)
      .join(";"),
  1024,
);

/**
 * The first instant after `t` at which the campaign's windows open or close (the open state
 * differs from the one at `t`), over the edges of every window together, within a week of
 * `t`; undefined without windows or without a change in that week.
 */
export function nextWindowChange(
  windows: readonly MaintenanceWindow[] | undefined,
  t: number,
): number | undefined {
  if (windows === undefined || windows.length === 0) return undefined;
  const open = windowOpen(windows, t);
  const { at, openAt } = candidatesAround(
    windows,
    windows.map((w) => localDayOf(w, t)),
  );
  for (let i = 0; i < at.length; i++) {
    if ((at[i] as number) > t && openAt[i] !== open) return at[i];
  }
  return undefined;
}

/** Time within [a, b) that lies outside every window (0 without windows). */
export function closedMsBetween(
  windows: readonly MaintenanceWindow[] | undefined,
  a: number,
  b: number,
): number {
  if (windows === undefined || windows.length === 0 || b <= a) return 0;
  let closed = 0;
  let t = a;
  let open = windowOpen(windows, t);
  for (let guard = 0; t < b && guard < 10_000; guard++) {
    const change = nextWindowChange(windows, t) ?? Number.POSITIVE_INFINITY;
    const until = Math.min(change, b);
    if (!open) closed += until - t;
    t = until;
    open = !open;
  }
  return closed;
}
