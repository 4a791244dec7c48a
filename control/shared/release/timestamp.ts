/**
 * RFC 3339 date-times, as written in a manifest's `expires`.
 */

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:(Z)|([+-])(\d{2}):(\d{2}))$/;

/**
 * Parses an RFC 3339 `date-time` (§5.6) into a `Date`, or returns `undefined`.
 *
 * Accepted: `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)` with upper-case `T` and `Z`, a real
 * calendar date (leap years respected), hours 00–23, minutes 00–59, seconds 00–59, and
 * 1–9 fraction digits (truncated to milliseconds). Refused: lower-case `t`/`z`, a space
 * separator, leap second `60` (a `Date` cannot represent it), and the `-00:00` offset is
 * treated like `Z`.
 */
export function parseRfc3339(text: string): Date | undefined {
  const m = RFC3339.exec(text);
  if (m === null) return undefined;
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6]].map(
    Number,
  ) as [number, number, number, number, number, number];
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  let offsetMinutes = 0;
  if (m[8] !== "Z") {
    const oh = Number(m[10]);
    const om = Number(m[11]);
    if (oh > 23 || om > 59) return undefined;
    offsetMinutes = (m[9] === "-" ? -1 : 1) * (oh * 60 + om);
  }
  const millis = m[7] === undefined ? 0 : Number(m[7].padEnd(3, "0").slice(0, 3));
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, millis);
  return new Date(date.getTime() - offsetMinutes * 60_000);
}

/**
 * Formats a valid `Date` as RFC 3339 in UTC: `YYYY-MM-DDTHH:MM:SSZ`, with `.sss` only when
 * the milliseconds are not zero. Throws a `RangeError` for an invalid `Date` or a year
 * outside 0000–9999. `parseRfc3339(formatRfc3339(d))` equals `d`.
 */
export function formatRfc3339(date: Date): string {
  const time = date.getTime();
  const year = date.getUTCFullYear();
  if (Number.isNaN(time) || year < 0 || year > 9999) {
    throw new RangeError("expected a valid Date between years 0000 and 9999");
  }
  const iso = date.toISOString(); // YYYY-MM-DDTHH:MM:SS.sssZ for years 0000–9999
  return iso.endsWith(".000Z") ? `${iso.slice(0, -5)}Z` : iso;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}
