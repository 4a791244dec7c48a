/**
 * The file `agentctl node label --file` reads: node id → labels, as YAML (or JSON)
 *
 * ```yaml
 * web-17: { rack: r1, zone: eu-1 }
 * web-18: { rack: r2, old: null }   # null removes the label
 * ```
 *
 * or as CSV with a header row naming the node column first and one label key per column
 * (`node,rack,zone`); an empty cell leaves that label as it is. No quoting: a cell holds no
 * comma and no quote.
 */
import { parse as parseYaml } from "yaml";
import { UsageError } from "../args.js";

/** One node's change from the file. */
export interface FileLabelChange {
  readonly nodeId: string;
  readonly set: Record<string, string>;
  readonly remove: string[];
}

/** Parses the file `name` holding `text`: CSV when `name` ends in `.csv`, else YAML or JSON. */
export function parseLabelFile(name: string, text: string): FileLabelChange[] {
  const changes = name.toLowerCase().endsWith(".csv") ? fromCsv(name, text) : fromYaml(name, text);
  if (changes.length === 0) throw new UsageError(`${name}: no nodes in the file`);
  return changes;
}

function fromYaml(name: string, text: string): FileLabelChange[] {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (error) {
    throw new UsageError(`${name}: not YAML or JSON: ${(error as Error).message.split("\n")[0]}`);
  }
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) {
    throw new UsageError(`${name}: expected a map of node id to labels`);
  }
  return Object.entries(doc).map(([nodeId, labels]) => {
    if (typeof labels !== "object" || labels === null || Array.isArray(labels)) {
      throw new UsageError(`${name}: node ${nodeId}: expected a map of label to value`);
    }
    const set: Record<string, string> = {};
    const remove: string[] = [];
    for (const [key, value] of Object.entries(labels as Record<string, unknown>)) {
      if (value === null) remove.push(key);
      else if (["string", "number", "boolean"].includes(typeof value)) set[key] = String(value);
      else throw new UsageError(`${name}: node ${nodeId}: label ${key} must be a plain value`);
    }
    return { nodeId, set, remove };
  });
}

function fromCsv(name: string, text: string): FileLabelChange[] {
  const rows = text
    .split(/\r?\n/)
    .map((line, i) => ({ line: i + 1, cells: line.split(",").map((c) => c.trim()) }))
    .filter((r) => r.cells.some((c) => c !== ""));
  const [header, ...body] = rows;
  if (!header) return [];
  const [, ...keys] = header.cells;
  if (keys.length === 0 || keys.some((k) => k === "")) {
    throw new UsageError(`${name}: the header names the node column, then one label per column`);
  }
  return body.map(({ line, cells }) => {
    if (cells.some((c) => c.includes('"'))) {
      throw new UsageError(`${name}:${line}: quoted cells are not read; give plain values`);
    }
    if (cells.length !== header.cells.length) {
      throw new UsageError(
        `${name}:${line}: ${cells.length} cells, the header has ${header.cells.length}`,
      );
    }
    const [nodeId = "", ...values] = cells;
    if (nodeId === "") throw new UsageError(`${name}:${line}: no node id`);
    const set: Record<string, string> = {};
    keys.forEach((key, i) => {
      const value = values[i] ?? "";
      if (value !== "") set[key] = value;
    });
    return { nodeId, set, remove: [] };
  });
}
