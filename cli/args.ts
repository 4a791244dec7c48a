/**
 * Flag parsing shared by every agentctl command: a strict wrapper around `node:util`
 * parseArgs that turns every mistake into a one-line {@link UsageError}, and the value
 * parsers (durations, percentages, `k=v` pairs, batch specs) whose messages say what to
 * type instead.
 */
import { accessSync, constants, statSync } from "node:fs";
import { resolve as resolvePath } from "node:path";
import { parseArgs } from "node:util";
import { HEADER_TOKEN_RULE, isHeaderToken } from "../control/shared/header-token.js";

/** A mistake in how agentctl was called. `main` prints it as one line and exits 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/** One flag a command accepts; `description` and `value` feed its `--help`. */
export interface FlagSpec {
  readonly type: "string" | "boolean";
  readonly short?: string;
  /** The flag may repeat; its value is then always an array. */
  readonly multiple?: boolean;
  readonly description: string;
  /** Placeholder shown in help for a string flag, such as `DURATION`. */
  readonly value?: string;
}

/** Flags by long name (without the leading dashes). */
export type FlagSpecs = Readonly<Record<string, FlagSpec>>;

/** Parsed flag values by long name: a string, a boolean, or an array for repeatable flags. */
export type FlagValues = Readonly<
  Record<string, string | boolean | (string | boolean)[] | undefined>
>;

/** The result of {@link parseFlags}. */
export interface ParsedArgs {
  readonly values: FlagValues;
  readonly positionals: readonly string[];
}

/**
 * Parses `argv` strictly against `flags`. An unknown flag, a missing value or a value
 * given to a boolean flag throws a {@link UsageError} naming the flag.
 */
export function parseFlags(argv: readonly string[], flags: FlagSpecs): ParsedArgs {
  const options: Record<
    string,
    { type: "string" | "boolean"; short?: string; multiple?: boolean }
  > = {};
  for (const [name, spec] of Object.entries(flags)) {
    options[name] = {
      type: spec.type,
      ...(spec.short === undefined ? {} : { short: spec.short }),
      ...(spec.multiple === true ? { multiple: true } : {}),
    };
  }
  try {
    const { values, positionals } = parseArgs({
      args: [...argv],
      options,
      strict: true,
      allowPositionals: true,
    });
    return { values: values as FlagValues, positionals };
  } catch (error) {
    throw new UsageError(describeParseError(error));
  }
}

function describeParseError(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  const flag = /'([^']+)'/.exec(message)?.[1];
  switch (code) {
    case "ERR_PARSE_ARGS_UNKNOWN_OPTION":
      return `unknown flag ${flag?.split(" ")[0] ?? message}`;
    case "ERR_PARSE_ARGS_INVALID_OPTION_VALUE":
      if (message.includes("argument missing")) return `flag ${flagName(flag)} needs a value`;
      if (message.includes("ambiguous")) {
        return `flag ${flagName(flag)} needs a value (write ${flagName(flag)}=VALUE for a value starting with "-")`;
      }
      return `flag ${flagName(flag)} does not take a value`;
    default:
      return message.split("\n")[0] ?? message;
  }
}

function flagName(fragment: string | undefined): string {
  // parseArgs quotes "-s, --server <value>" or "--json"; keep the long form.
  const long = fragment?.match(/--[\w-]+/)?.[0];
  return long ?? fragment ?? "?";
}

/** The value of a string flag, or undefined when absent. */
export function stringFlag(values: FlagValues, name: string): string | undefined {
  const value = values[name];
  return typeof value === "string" ? value : undefined;
}

/** The values of a repeatable string flag, in order (empty when absent). */
export function listFlag(values: FlagValues, name: string): string[] {
  const value = values[name];
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === "string");
  return typeof value === "string" ? [value] : [];
}

/** True when a boolean flag was given. */
export function boolFlag(values: FlagValues, name: string): boolean {
  return values[name] === true;
}

/** The value of a flag that must be given. */
export function requiredFlag(values: FlagValues, name: string): string {
  const value = stringFlag(values, name);
  if (value === undefined || value === "") throw new UsageError(`missing required flag --${name}`);
  return value;
}

/**
 * Checks the positional arguments against the names a command expects (`names` in
 * order; all required unless `optional` says how many trailing ones may be left out).
 */
export function expectPositionals(
  positionals: readonly string[],
  names: readonly string[],
  optional = 0,
): string[] {
  if (positionals.length > names.length) {
    throw new UsageError(`unexpected argument "${positionals[names.length]}"`);
  }
  if (positionals.length < names.length - optional) {
    throw new UsageError(`missing argument ${names[positionals.length]}`);
  }
  return [...positionals];
}

const DURATION = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/;

/**
 * Parses a duration such as `30m`, `1h30m`, `45s`, `720h` or `0s` into milliseconds.
 * Only the units h, m and s in that order are accepted, so `1.5h`, `90` or `1d` are refused
 * rather than guessed at.
 */
export function parseDuration(text: string, flag: string): number {
  const match = DURATION.exec(text);
  if (text === "" || match === null) {
    throw new UsageError(
      `invalid duration "${text}" for --${flag}: use hours, minutes and seconds such as 30m, 1h30m, 45s or 0s`,
    );
  }
  const [, h = "0", m = "0", s = "0"] = match;
  const ms = ((Number(h) * 60 + Number(m)) * 60 + Number(s)) * 1000;
  if (!Number.isSafeInteger(ms))
    throw new UsageError(`duration "${text}" for --${flag} is too long`);
  return ms;
}

/** Formats milliseconds the way {@link parseDuration} reads them (`1h30m`, `45s`, `0s`). */
export function formatDuration(ms: number): string {
  const total = Math.max(0, Math.round(ms / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const text = `${h > 0 ? `${h}h` : ""}${m > 0 ? `${m}m` : ""}${s > 0 ? `${s}s` : ""}`;
  return text === "" ? "0s" : text;
}

/** RFC 3339: a date, `T` (or `t`, or a space), a time with optional fraction, and `Z` or an offset. */
const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * Parses an instant flag: an RFC 3339 time (`2026-12-07T09:00:00Z`, `…+01:00`) or a duration
 * as {@link parseDuration} reads it (`2h`, `30m`), meaning that long before `now`. A date
 * alone, a time without an offset or an impossible date is refused rather than guessed at.
 */
export function parseInstant(text: string, flag: string, now: Date): Date {
  if (DURATION.test(text) && text !== "")
    return new Date(now.getTime() - parseDuration(text, flag));
  const match = RFC3339.exec(text);
  const date =
    match === null ? undefined : new Date(`${text.slice(0, 10)}T${text.slice(11).toUpperCase()}`);
  const [, y, mo, d, h, mi, sec] = match ?? [];
  if (
    date === undefined ||
    Number.isNaN(date.getTime()) ||
    // Date rolls 2026-02-30 over into March; the fields must be what they say.
    Number(mo) < 1 ||
    Number(mo) > 12 ||
    Number(d) < 1 ||
    Number(d) > new Date(Date.UTC(Number(y), Number(mo), 0)).getUTCDate() ||
    Number(h) > 23 ||
    Number(mi) > 59 ||
    Number(sec) > 59
  ) {
    throw new UsageError(
      `invalid time "${text}" for --${flag}: use an RFC 3339 time such as 2026-12-07T09:00:00Z or a duration ago such as 2h or 30m`,
    );
  }
  return date;
}

/** Parses an integer flag within `[min, max]`; anything else is a {@link UsageError}. */
export function parseInteger(text: string, flag: string, min: number, max: number): number {
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text))) {
    throw new UsageError(`invalid value "${text}" for --${flag}: expected a whole number`);
  }
  const value = Number(text);
  if (value < min || value > max) {
    throw new UsageError(`invalid value "${text}" for --${flag}: expected ${min} to ${max}`);
  }
  return value;
}

/** Parses a percentage flag: an integer from 0 to 100. */
export function parsePercent(text: string, flag: string): number {
  if (!/^\d+$/.test(text) || Number(text) > 100) {
    throw new UsageError(
      `invalid percentage "${text}" for --${flag}: expected a whole number 0 to 100`,
    );
  }
  return Number(text);
}

/**
 * Parses repeated `k=v` flags into a record. The key must be non-empty; a key given twice
 * with different values is refused.
 */
export function parseKeyValues(items: readonly string[], flag: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of items) {
    const eq = item.indexOf("=");
    if (eq <= 0) throw new UsageError(`invalid --${flag} "${item}": expected key=value`);
    const key = item.slice(0, eq);
    const value = item.slice(eq + 1);
    if (out[key] !== undefined && out[key] !== value) {
      throw new UsageError(`--${flag} gives ${key} twice ("${out[key]}" and "${value}")`);
    }
    out[key] = value;
  }
  return out;
}

/** One step of a parsed `--batches` spec; `minDurationMs` is undefined for the server default. */
export interface BatchArg {
  readonly percent: number;
  readonly minDurationMs: number | undefined;
}

/**
 * Parses `--batches 5:30m,25:30m,100:30m`: cumulative percentages (1 to 100, strictly
 * increasing, the last one 100), each with an optional minimum duration.
 */
export function parseBatches(text: string): BatchArg[] {
  const hint = "expected PERCENT[:DURATION],… such as 5:30m,25:30m,100:30m";
  const batches: BatchArg[] = [];
  for (const part of text.split(",")) {
    const [percentText = "", duration, extra] = part.split(":");
    if (extra !== undefined || !/^\d+$/.test(percentText)) {
      throw new UsageError(`invalid --batches "${text}": ${hint}`);
    }
    const percent = Number(percentText);
    if (percent < 1 || percent > 100) {
      throw new UsageError(`invalid --batches "${text}": each percentage must be 1 to 100`);
    }
    const previous = batches.at(-1);
    if (previous !== undefined && percent <= previous.percent) {
      throw new UsageError(
        `invalid --batches "${text}": percentages are cumulative and must increase (${previous.percent} then ${percent})`,
      );
    }
    batches.push({
      percent,
      minDurationMs: duration === undefined ? undefined : parseDuration(duration, "batches"),
    });
  }
  if (batches.at(-1)?.percent !== 100) {
    throw new UsageError(`invalid --batches "${text}": the last batch must be 100`);
  }
  return batches;
}

/** Parses a flag whose value must be one of `choices`. */
export function parseChoice<T extends string>(
  text: string,
  flag: string,
  choices: readonly T[],
): T {
  const found = choices.find((c) => c === text);
  if (found === undefined) {
    throw new UsageError(`invalid value "${text}" for --${flag}: expected ${choices.join(", ")}`);
  }
  return found;
}

/**
 * The admin API's base URL from `--server` or `AGENTCTL_SERVER` (named by `source`): an
 * http(s) URL, `http://` assumed when no scheme is given; returned without a trailing slash.
 * `unix:PATH` names Control's admin Unix socket, returned as `unix:` and the absolute path.
 */
export function parseServerUrl(text: string, source: string): string {
  const example = "http://127.0.0.1:7080";
  if (text.startsWith("unix:")) {
    const path = text.slice("unix:".length);
    if (path === "" || path.includes("\0")) {
      throw new UsageError(`invalid ${source} "${text}": expected unix:PATH, a socket's path`);
    }
    return `unix:${resolvePath(path)}`;
  }
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `http://${text}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new UsageError(`invalid ${source} "${text}": expected a URL such as ${example}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new UsageError(`invalid ${source} "${text}": use http:// or https://`);
  }
  if (/\s/.test(text) || url.hostname === "") {
    throw new UsageError(`invalid ${source} "${text}": expected a URL such as ${example}`);
  }
  return url.href.replace(/\/+$/, "");
}

/** Whether `host` (a URL's hostname, IPv6 in brackets or not) is this machine's loopback. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, "").toLowerCase();
  return bare === "localhost" || bare === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare);
}

/**
 * Refuses to send a bearer token to `server` (a URL {@link parseServerUrl} accepted) over plain
 * `http://` to a host that is not loopback, where it would cross the network in clear text
 * for anyone on the path to read and replay; `insecure` (`--insecure`) sends it anyway.
 */
export function checkClearTextToken(server: string, insecure: boolean): void {
  const url = new URL(server);
  if (url.protocol !== "http:" || insecure || isLoopbackHost(url.hostname)) return;
  throw new UsageError(
    `refusing to send the token in clear text to ${url.origin}, which is not on loopback: use https:// (Control's tls.admin; --ca-file for a private CA), or --insecure to send it anyway`,
  );
}

/**
 * A bearer token from `source` (`--token`, `AGENTCTL_TOKEN`, a token file): it travels in a
 * header, so it must be printable ASCII without spaces or newlines. The message never
 * repeats the token.
 */
export function checkToken(token: string, source: string): string {
  if (!isHeaderToken(token)) throw new UsageError(`${source} ${HEADER_TOKEN_RULE}`);
  return token;
}

/** Refuses, naming `what`, a path that is not a readable file (or directory, with `dir`). */
export function checkReadable(path: string, what: string, kind: "file" | "dir" = "file"): string {
  const refuse = (error: unknown): never => {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === "ENOENT" || code === "ENOTDIR" ? "does not exist" : "cannot be read";
    throw new UsageError(`${what}: ${path} ${why}${code ? ` (${code})` : ""}`);
  };
  let stats: ReturnType<typeof statSync> | undefined;
  try {
    stats = statSync(path);
  } catch (error) {
    refuse(error);
  }
  if (kind === "file" && stats?.isDirectory()) {
    throw new UsageError(`${what}: ${path} is a directory`);
  }
  if (kind === "dir" && !stats?.isDirectory()) {
    throw new UsageError(`${what}: ${path} is not a directory`);
  }
  try {
    accessSync(path, kind === "dir" ? constants.R_OK | constants.X_OK : constants.R_OK);
  } catch (error) {
    refuse(error);
  }
  return path;
}
