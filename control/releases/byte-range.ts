/**
 * The `Range` header of an artifact download (RFC 9110 §14), decided without I/O: serve the
 * whole file, one slice of it, or answer 416. Only a single byte range is served; a header
 * this code does not serve (another unit, several ranges, bad syntax) is ignored, as the RFC
 * allows, and the whole file is sent, so a hostile multi-range header never multiplies work.
 */

/** What to send for a request's `Range` header. */
export type RangeDecision =
  /** 200 with the whole file. */
  | { readonly kind: "full" }
  /** 206 with bytes `start`…`end` (inclusive), both within the file. */
  | { readonly kind: "partial"; readonly start: number; readonly end: number }
  /** 416: the range starts beyond the end of the file (or asks for an empty suffix). */
  | { readonly kind: "unsatisfiable" };

const FULL: RangeDecision = { kind: "full" };
const UNSATISFIABLE: RangeDecision = { kind: "unsatisfiable" };
const SPEC = /^(\d*)-(\d*)$/;

/**
 * Decides what to send for `range` over a file of `size` bytes with entity tag `etag`.
 * An `If-Range` that is not exactly `etag` (a date, or another tag) means the client's
 * partial copy may be stale: the whole file is sent.
 */
export function decideRange(
  range: string | undefined,
  size: number,
  etag: string,
  ifRange?: string,
): RangeDecision {
  if (range === undefined) return FULL;
  if (ifRange !== undefined && ifRange.trim() !== etag) return FULL;
  const text = range.trim();
  const equals = text.indexOf("=");
  if (equals < 0 || text.slice(0, equals).trim().toLowerCase() !== "bytes") return FULL;
  const specs = text.slice(equals + 1).split(",");
  if (specs.length !== 1) return FULL;
  const match = SPEC.exec((specs[0] ?? "").trim());
  if (!match) return FULL;
  const first = match[1] ?? "";
  const last = match[2] ?? "";
  if (first === "" && last === "") return FULL;
  if (first === "") {
    const suffix = position(last);
    if (suffix === 0 || size === 0) return UNSATISFIABLE;
    return { kind: "partial", start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = position(first);
  if (last !== "" && position(last) < start) return FULL; // invalid range-spec: ignored
  if (start >= size) return UNSATISFIABLE;
  const end = last === "" ? size - 1 : Math.min(position(last), size - 1);
  return { kind: "partial", start, end };
}

/** A byte position; absurdly long digit strings count as infinitely far. */
function position(digits: string): number {
  return digits.length > 15 ? Number.POSITIVE_INFINITY : Number(digits);
}
