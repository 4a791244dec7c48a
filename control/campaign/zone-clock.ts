/**
 * A time zone's wall clock, read through `Intl` (the runtime's tz data): the offset from UTC at
 * an instant, the local time an instant shows, the instants that show a local time, and the
 * instant near a local time at which the zone changes its offset. Pure functions of the zone
 * and an instant; what `Intl` answered is kept per zone and minute.
 *
 * Local times are UTC-based ms counts (`Date.UTC` of the wall clock's fields), so their day and
 * minute are read with the UTC getters. Offsets are assumed to change on whole minutes and at
 * most once within a day of any instant, as in every zone's rules.
 */

const MINUTE_MS = 60_000;
/** One day in ms. */
export const DAY_MS = 86_400_000;
/** Zones change their offset on a quarter hour almost always; only such a span is read per minute. */
const QUARTER_MS = 15 * MINUTE_MS;

const formats = new Map<string, Intl.DateTimeFormat>();
/** Per zone: whole minute (`t / MINUTE_MS`) → offset. */
const readings = new Map<string, Map<number, number>>();

function isUtc(timeZone: string): boolean {
  return timeZone === "UTC" || timeZone === "Etc/UTC";
}

function formatFor(timeZone: string): Intl.DateTimeFormat {
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
  return format;
}

/** The offset `Intl` gives at the whole-minute instant `at`, remembered per zone and minute. */
function offsetAtMinute(timeZone: string, at: number): number {
  let zone = readings.get(timeZone);
  if (zone === undefined) {
    zone = new Map();
    readings.set(timeZone, zone);
  }
  const key = at / MINUTE_MS;
  const known = zone.get(key);
  if (known !== undefined) return known;
  const p: Record<string, number> = {};
  for (const part of formatFor(timeZone).formatToParts(new Date(at)))
    p[part.type] = Number(part.value);
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
  zone.set(key, offset);
  return offset;
}

/**
 * The zone's offset from UTC at instant `t` (local = t + offset), in ms. Read at the quarter
 * hours around `t`; only a quarter hour whose two ends differ (it holds a change, which may fall
 * on any minute) is read at `t`'s own minute.
 */
export function offsetAt(timeZone: string, t: number): number {
  if (isUtc(timeZone)) return 0;
  const quarter = Math.floor(t / QUARTER_MS) * QUARTER_MS;
  const start = offsetAtMinute(timeZone, quarter);
  if (start === offsetAtMinute(timeZone, quarter + QUARTER_MS)) return start;
  return offsetAtMinute(timeZone, Math.floor(t / MINUTE_MS) * MINUTE_MS);
}

/** The local wall-clock time that instant `t` shows in the zone. */
export function localMs(timeZone: string, t: number): number {
  return t + offsetAt(timeZone, t);
}

/**
 * The instants at which the zone's wall clock shows `local`: one on an ordinary day (given
 * twice), two where the zone repeats it (clocks set back), none where it skips it (clocks set
 * forward).
 */
export function instantsShowing(timeZone: string, local: number): number[] {
  const candidates = [
    local - offsetAt(timeZone, local - DAY_MS),
    local - offsetAt(timeZone, local + DAY_MS),
  ];
  return candidates.filter((t) => localMs(timeZone, t) === local);
}

/**
 * The instant at which the zone changes its offset within a day either side of the
 * whole-minute local time `local` (read as an instant, which is within 14 hours of every instant
 * that shows it), or undefined where the offset is the same a day before and a day after.
 */
export function offsetChangeNear(timeZone: string, local: number): number | undefined {
  const later = offsetAt(timeZone, local + DAY_MS);
  if (offsetAt(timeZone, local - DAY_MS) === later) return undefined;
  // lo shows the earlier offset, hi the later; halve on whole minutes until they touch.
  let lo = local - DAY_MS;
  let hi = local + DAY_MS;
  while (hi - lo > MINUTE_MS) {
    const mid = lo + Math.floor((hi - lo) / (2 * MINUTE_MS)) * MINUTE_MS;
    if (offsetAt(timeZone, mid) === later) hi = mid;
    else lo = mid;
  }
  return hi;
}
