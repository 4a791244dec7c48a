/**
 * How agentctl writes: aligned tables for people, protobuf JSON for scripts, and the
 * small formatters (enum names, times, ages) every command shares. Colour is used only
 * on a terminal and never when `NO_COLOR` is set.
 */
import type { DescEnum, DescMessage, MessageShape } from "@bufbuild/protobuf";
import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { enumName } from "./enum-name.js";
import { printable, stripAnsi } from "./printable.js";
import { tableJson } from "./table-json.js";

/** A stream agentctl writes to: process.stdout in production, a buffer in tests. */
export interface Sink {
  write(text: string): unknown;
  readonly isTTY?: boolean | undefined;
  readonly columns?: number | undefined;
}

/**
 * Pads each column to its widest cell; the last column is never padded. Each cell is written
 * {@link printable}: a control character an Agent put in its text is shown, never obeyed.
 */
export function formatTable(
  header: readonly string[],
  cellRows: readonly (readonly string[])[],
): string {
  const rows = cellRows.map((r) => r.map(printable));
  const widths = header.map((h, i) =>
    Math.max(visibleLength(h), ...rows.map((r) => visibleLength(r[i] ?? ""))),
  );
  const line = (cells: readonly string[]): string =>
    cells
      .map((cell, i) =>
        i === cells.length - 1 ? cell : cell + " ".repeat((widths[i] ?? 0) - visibleLength(cell)),
      )
      .join("  ")
      .trimEnd();
  return `${[line(header), ...rows.map(line)].join("\n")}\n`;
}

/**
 * Formats `key: value` pairs with the values aligned; empty values are shown as "-". Each
 * value is written {@link printable}, on one line.
 */
export function formatFields(fields: readonly (readonly [string, string])[]): string {
  const width = Math.max(...fields.map(([k]) => k.length)) + 1;
  return fields
    .map(([k, v]) => `${`${k}:`.padEnd(width)} ${v === "" ? "-" : printable(v)}\n`)
    .join("");
}

/** The printed width of `text`, ignoring ANSI colour sequences. */
export function visibleLength(text: string): number {
  return stripAnsi(text).length;
}

/**
 * Serialises a message as indented JSON in the words of the tables ({@link tableJson}):
 * protobuf's lowerCamelCase field names, 64-bit integers as strings, every field present even
 * when it holds its default (`"online": false`), so scripts never have to guess at a missing
 * key; enums by their short names (`running`), positions counted from 1, a campaign spec in
 * its flags' words.
 */
export function messageJson<Desc extends DescMessage>(
  schema: Desc,
  message: MessageShape<Desc>,
): string {
  return `${JSON.stringify(tableJson(schema, message), null, 2)}\n`;
}

/** {@link messageJson} on one line (for streams: one message per line). */
export function messageJsonLine<Desc extends DescMessage>(
  schema: Desc,
  message: MessageShape<Desc>,
): string {
  return `${JSON.stringify(tableJson(schema, message))}\n`;
}

/** Serialises a plain value as indented JSON (for the documented non-protobuf shapes). */
export function plainJson(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/** The enum number whose short name (see {@link enumName}) is `name`, if any. */
export function enumValue(desc: DescEnum, name: string): number | undefined {
  return desc.values.find((v) => enumName(desc, v.number) === name.toLowerCase())?.number;
}

/** The names {@link enumName} prints for every value except the unspecified zero. */
export function enumNames(desc: DescEnum): string[] {
  return desc.values.filter((v) => v.number !== 0).map((v) => enumName(desc, v.number));
}

/** A timestamp as `2025-01-31 12:00:00Z` (UTC, seconds), or "-" when unset. */
export function formatTime(ts: Timestamp | undefined): string {
  if (ts === undefined) return "-";
  return `${timestampDate(ts).toISOString().slice(0, 19).replace("T", " ")}Z`;
}

/** How long ago `ts` was, relative to `now`: `12s ago`, `5m ago`, `3h ago`, `2d ago`. */
export function formatAge(ts: Timestamp | undefined, now: Date): string {
  if (ts === undefined) return "-";
  const seconds = Math.max(0, Math.round((now.getTime() - timestampDate(ts).getTime()) / 1000));
  if (seconds < 60) return `${seconds}s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m ago`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)}h ago`;
  return `${Math.floor(seconds / 86400)}d ago`;
}

/** Formats labels as `k=v,k2=v2`, sorted by key; "-" when there are none. */
export function formatLabels(labels: Readonly<Record<string, string>>): string {
  const keys = Object.keys(labels).sort();
  return keys.length === 0 ? "-" : keys.map((k) => `${k}=${labels[k]}`).join(",");
}

export { enumName } from "./enum-name.js";
export { type Colour, createPainter, type Painter } from "./paint.js";
export { ESC, printable, stripAnsi, terminalSequence } from "./printable.js";
