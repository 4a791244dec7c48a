/**
 * Semantic Versioning 2.0.0 (https://semver.org): validation and precedence.
 */

// The regular expression published with the specification (numbered-group variant).
const SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;

/** The longest version string accepted, to keep stored and displayed values sane. */
export const MAX_VERSION_LENGTH = 128;

/**
 * True when `version` is a SemVer 2.0.0 version without a leading `v`, e.g. `1.4.0`,
 * `2.0.0-rc.1+build.7`, at most {@link MAX_VERSION_LENGTH} characters, with each numeric
 * core part a safe integer.
 */
export function isSemver(version: string): boolean {
  if (version.length > MAX_VERSION_LENGTH) return false;
  const match = SEMVER.exec(version);
  if (match === null) return false;
  return [match[1], match[2], match[3]].every((part) => Number.isSafeInteger(Number(part)));
}

/**
 * Compares two valid SemVer versions by precedence (semver.org §11): negative when `a`
 * precedes `b`, zero when they have equal precedence (build metadata is ignored), positive
 * otherwise. Throws a `RangeError` if either is not valid SemVer.
 */
export function compareSemver(a: string, b: string): number {
  const pa = parts(a);
  const pb = parts(b);
  for (let i = 0; i < 3; i += 1) {
    const d = (pa.core[i] ?? 0) - (pb.core[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  if (pa.pre.length === 0 || pb.pre.length === 0) {
    return pa.pre.length === pb.pre.length ? 0 : pa.pre.length === 0 ? 1 : -1;
  }
  const n = Math.max(pa.pre.length, pb.pre.length);
  for (let i = 0; i < n; i += 1) {
    const x = pa.pre[i];
    const y = pb.pre[i];
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    const d = compareIdentifier(x, y);
    if (d !== 0) return d;
  }
  return 0;
}

function parts(version: string): { core: number[]; pre: string[] } {
  if (!isSemver(version)) throw new RangeError(`${JSON.stringify(version)} is not SemVer 2.0.0`);
  const match = SEMVER.exec(version)!;
  return {
    core: [Number(match[1]), Number(match[2]), Number(match[3])],
    pre: match[4] === undefined ? [] : match[4].split("."),
  };
}

function compareIdentifier(x: string, y: string): number {
  const xNumeric = /^\d+$/.test(x);
  const yNumeric = /^\d+$/.test(y);
  if (xNumeric && yNumeric) {
    const d = BigInt(x) - BigInt(y);
    return d === 0n ? 0 : d < 0n ? -1 : 1;
  }
  if (xNumeric !== yNumeric) return xNumeric ? -1 : 1;
  return x < y ? -1 : x > y ? 1 : 0;
}
