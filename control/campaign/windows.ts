/**
 * Maintenance windows: when a campaign may offer upgrades. A window is a set of weekdays and a
 * span of wall-clock time in one IANA time zone (`Mon-Fri 02:00-04:00 Europe/Berlin`). Pure
 * functions of the windows and an instant; time zones come from `Intl` (the runtime's tz data),
 * so a window follows its zone's daylight-saving changes. An edge whose wall-clock time the zone
 * skips happens at the first instant after the gap; one whose time the zone repeats, at its
 * first occurrence; the open state is derived from the edges.
 *
 * A campaign without windows is always open. Outside every window of its campaign nothing new
 * is offered, nodes in flight are still judged, and closed time does not count toward a
 * batch's minimum duration or soak ({@link closedMsBetween}).
 */

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
const DAY_MS = 86_400_000;

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
    // Runs of consecutive days as ranges.
    const runs: string[] = [];
    let i = 0;
    while (i < w.days.length) {
      let j = i;
      while (j + 1 < w.days.length && (w.days[j + 1] as number) === (w.days[j] as number) + 1) j++;
      const a = w.days[i] as number;
      const b = w.days[j] as number;
      runs.push(
        j - i >= 2
          ? `${names(a)}-${names(b)}`
          : w.days
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

const formats = new Map<string, Intl.DateTimeFormat>();
/** Per zone: quarter hour (`t / OFFSET_BUCKET_MS`) → offset. */
const offsets = new Map<string, Map<number, number>>();
const OFFSET_BUCKET_MS = 15 * MINUTE_MS;

function isUtc(timeZone: string): boolean {
  return timeZone === "UTC" || timeZone === "Etc/UTC";
}

/**
 * The zone's offset from UTC at instant `t` (local = t + offset), in ms. Zone offsets change
 * only on quarter hours, so one lookup per zone and quarter hour is kept.
 */
function offsetAt(timeZone: string, t: number): number {
  if (isUtc(timeZone)) return 0;
  const bucket = Math.floor(t / OFFSET_BUCKET_MS);
  let zone = offsets.get(timeZone);
  if (zone === undefined) {
    zone = new Map();
    offsets.set(timeZone, zone);
  }
  const known = zone.get(bucket);
  if (known !== undefined) return known;
  let format = formats.get(timeZone);
  if (format === undefined) {
    format = new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    formats.set(timeZone, format);
  }
  const at = bucket * OFFSET_BUCKET_MS;
  const p: Record<string, number> = {};
  for (const part of format.formatToParts(new Date(at))) {
    if (part.type !== "literal") p[part.type] = Number(part.value);
  }
  const local = Date.UTC(
    p.year as number,
    (p.month as number) - 1,
    p.day as number,
    (p.hour as number) % 24,
    p.minute as number,
    p.second as number,
  );
  const offset = local - at;
  if (zone.size > 50_000) zone.clear();
  zone.set(bucket, offset);
  return offset;
}

/** Local wall-clock time of `t` in the zone, as a UTC-based ms count (for day and minute). */
function localMs(timeZone: string, t: number): number {
  return t + offsetAt(timeZone, t);
}

/**
 * The instant at which the zone's wall clock first reaches `local` (a UTC-based ms count): the
 * one instant showing it on an ordinary day; the first of the two where the zone repeats it
 * (clocks set back); the first instant after the gap where the zone skips it (clocks set
 * forward). Assumes at most one offset change within a day of `local`, as every zone has.
 */
function instantOf(timeZone: string, local: number): number {
  const before = local - offsetAt(timeZone, local - DAY_MS);
  const after = local - offsetAt(timeZone, local + DAY_MS);
  if (before === after) return before;
  const first = Math.min(before, after);
  if (localMs(timeZone, first) === local) return first;
  const last = Math.max(before, after);
  if (localMs(timeZone, last) === local) return last;
  // Skipped: the gap ends at the offset change, on a quarter hour between the two candidates.
  let t = Math.ceil(first / OFFSET_BUCKET_MS) * OFFSET_BUCKET_MS;
  while (t < last && localMs(timeZone, t) < local) t += OFFSET_BUCKET_MS;
  return t;
}

/** The instants at which window `w` opens and closes on the local day starting at `dayStart`. */
function spanOn(w: MaintenanceWindow, dayStart: number): readonly [number, number] {
  const end = w.endMinute > w.startMinute ? w.endMinute : w.endMinute + 1440;
  return [
    instantOf(w.timeZone, dayStart + w.startMinute * MINUTE_MS),
    instantOf(w.timeZone, dayStart + end * MINUTE_MS),
  ];
}

/** The local midnight (UTC-based ms count) of the local day of `t` in `w`'s zone. */
function localToday(w: MaintenanceWindow, t: number): number {
  return Math.floor(localMs(w.timeZone, t) / DAY_MS) * DAY_MS;
}

/**
 * True when `t` lies between an opening of `w` and the closing that follows it: the spans of
 * yesterday (a span past midnight), today and tomorrow (a day whose clocks were set back over
 * midnight) by `t`'s local calendar.
 */
function openIn(w: MaintenanceWindow, t: number): boolean {
  const today = localToday(w, t);
  for (let k = -1; k <= 1; k++) {
    const dayStart = today + k * DAY_MS;
    if (!w.days.includes(new Date(dayStart).getUTCDay())) continue;
    const [opens, closes] = spanOn(w, dayStart);
    if (opens <= t && t < closes) return true;
  }
  return false;
}

/** True when `t` lies in at least one window; always true without windows. */
export function windowOpen(windows: readonly MaintenanceWindow[] | undefined, t: number): boolean {
  if (windows === undefined || windows.length === 0) return true;
  return windows.some((w) => openIn(w, t));
}

/** Openings and closings of one window on local days `from`…`to` around `t`, as instants. */
function edges(w: MaintenanceWindow, t: number, from: number, to: number): number[] {
  const today = localToday(w, t);
  const out: number[] = [];
  for (let k = from; k <= to; k++) {
    const dayStart = today + k * DAY_MS;
    if (!w.days.includes(new Date(dayStart).getUTCDay())) continue;
    const [opens, closes] = spanOn(w, dayStart);
    out.push(opens, closes);
  }
  return out;
}

/**
 * The first instant after `t` at which the campaign's windows open or close (the open state
 * differs from the one at `t`); undefined without windows.
 */
export function nextWindowChange(
  windows: readonly MaintenanceWindow[] | undefined,
  t: number,
): number | undefined {
  if (windows === undefined || windows.length === 0) return undefined;
  const open = windowOpen(windows, t);
  for (const [from, to] of [
    [-1, 1],
    [2, 8],
  ] as const) {
    const candidates = windows
      .flatMap((w) => edges(w, t, from, to))
      .filter((c) => c > t)
      .sort((a, b) => a - b);
    for (const c of candidates) if (windowOpen(windows, c) !== open) return c;
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
