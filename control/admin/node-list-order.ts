/**
 * ListNodes' id search and sort orders, read in the database a page at a time: the order is a
 * column and a direction with the node id as the tie-break, and a page token carries the
 * last row's key in that order (keyset paging), so page 50 of 10,000 nodes costs what page
 * 1 does and a node that changes between pages is never shown twice.
 */
import type { FilterQuery, QueryOrderMap } from "@mikro-orm/core";
import type { NodeRecord } from "../db/entities/index.js";
import { ControlError } from "../errors.js";

/** The columns ListNodes sorts by, as `order_by` names them. */
export const NODE_ORDER_FIELDS = ["node_id", "pool", "agent_version", "last_seen"] as const;

/** One of {@link NODE_ORDER_FIELDS}. */
export type NodeOrderField = (typeof NODE_ORDER_FIELDS)[number];

/** A parsed `order_by`. */
export interface NodeOrder {
  readonly field: NodeOrderField;
  readonly descending: boolean;
}

/** The most characters of `node_id_contains`: a node id's own limit. */
export const MAX_NODE_ID_SEARCH = 128;

/**
 * Parses ListNodes' `order_by` ("" is node id ascending).
 * @throws ControlError `invalid_argument` naming the accepted orders.
 */
export function parseNodeOrder(orderBy: string): NodeOrder {
  const words = orderBy.trim().split(/\s+/).filter(Boolean);
  const [field = "node_id", direction = "asc", ...rest] = words;
  const known = (NODE_ORDER_FIELDS as readonly string[]).includes(field);
  if (!known || rest.length > 0 || (direction !== "asc" && direction !== "desc")) {
    throw new ControlError(
      "invalid_argument",
      `order_by: "${orderBy.slice(0, 60)}" is not one of ${NODE_ORDER_FIELDS.join(", ")}, each optionally followed by " desc"`,
      { field: "order_by" },
    );
  }
  return { field: field as NodeOrderField, descending: direction === "desc" };
}

/** The text of an order, as page tokens record it. */
function orderText(order: NodeOrder): string {
  return `${order.field}${order.descending ? " desc" : ""}`;
}

/** The sort key of a row in `order`'s column (`null`: never seen). */
type SortValue = string | null;

function sortValueOf(record: NodeRecord, field: NodeOrderField): SortValue {
  switch (field) {
    case "node_id":
      return record.id;
    case "pool":
      return record.pool;
    case "agent_version":
      return record.agentVersion;
    case "last_seen":
      return record.lastSeen === null ? null : record.lastSeen.toISOString();
  }
}

/** The key of the row after which the next page starts. */
export interface NodeCursor {
  readonly id: string;
  readonly value: SortValue;
}

/** Encodes the last row of a page as an opaque token of `order`. */
export function encodeNodeCursor(record: NodeRecord, order: NodeOrder): string {
  const body =
    order.field === "node_id" && !order.descending
      ? { k: record.id }
      : { k: record.id, v: sortValueOf(record, order.field), o: orderText(order) };
  return Buffer.from(JSON.stringify(body), "utf8").toString("base64url");
}

/**
 * Decodes a page token of `order` (empty: the first page). A token of the default order is
 * the one every list RPC issues (`{k}`), so tokens from before sorting existed still work.
 * @throws ControlError `invalid_argument` for a token this server did not issue, or one
 *   issued for another order.
 */
export function decodeNodeCursor(token: string, order: NodeOrder): NodeCursor | undefined {
  if (!token) return undefined;
  let parsed: { k?: unknown; v?: unknown; o?: unknown } | undefined;
  try {
    const value: unknown = JSON.parse(Buffer.from(token, "base64url").toString("utf8"));
    if (typeof value === "object" && value !== null) parsed = value;
  } catch {
    // Refused below.
  }
  if (parsed === undefined || typeof parsed.k !== "string") {
    throw new ControlError("invalid_argument", "page_token is not one this server issued", {
      field: "page_token",
    });
  }
  const issuedFor = typeof parsed.o === "string" ? parsed.o : "node_id";
  if (issuedFor !== orderText(order)) {
    throw new ControlError(
      "invalid_argument",
      `page_token was issued for order_by "${issuedFor}", not "${orderText(order)}": start again without it`,
      { field: "page_token" },
    );
  }
  if (order.field === "node_id") return { id: parsed.k, value: parsed.k };
  const value = parsed.v;
  if (value !== null && typeof value !== "string") {
    throw new ControlError("invalid_argument", "page_token is not one this server issued", {
      field: "page_token",
    });
  }
  return { id: parsed.k, value };
}

/** The entity property of an order's column. */
function propertyOf(
  field: Exclude<NodeOrderField, "node_id">,
): "pool" | "agentVersion" | "lastSeen" {
  switch (field) {
    case "pool":
      return "pool";
    case "agent_version":
      return "agentVersion";
    case "last_seen":
      return "lastSeen";
  }
}

/**
 * The ORDER BY of `order`: its column, then the node id, both in its direction; a node never
 * seen sorts first ascending and last descending (the exact reverse).
 */
export function nodeOrderBy(order: NodeOrder): QueryOrderMap<NodeRecord> {
  const dir = order.descending ? "desc" : "asc";
  if (order.field === "node_id") return { id: dir };
  const column =
    order.field === "last_seen" ? `${dir} nulls ${order.descending ? "last" : "first"}` : dir;
  return { [propertyOf(order.field)]: column, id: dir } as QueryOrderMap<NodeRecord>;
}

/** The rows after `cursor` in `order` (keyset: column, then id). */
export function afterCursor(order: NodeOrder, cursor: NodeCursor): FilterQuery<NodeRecord> {
  const past = order.descending ? "$lt" : "$gt";
  const idPast = { id: { [past]: cursor.id } };
  if (order.field === "node_id") return idPast as FilterQuery<NodeRecord>;
  const property = propertyOf(order.field);
  const value: unknown =
    order.field === "last_seen" && cursor.value !== null ? new Date(cursor.value) : cursor.value;
  if (value === null) {
    // Never seen: first ascending (every seen node comes after), last descending.
    return (
      order.descending
        ? { [property]: null, ...idPast }
        : { $or: [{ [property]: { $ne: null } }, { [property]: null, ...idPast }] }
    ) as FilterQuery<NodeRecord>;
  }
  const later: Record<string, unknown>[] = [
    { [property]: { [past]: value } },
    { [property]: value, ...idPast },
  ];
  if (order.field === "last_seen" && order.descending) later.push({ [property]: null });
  return { $or: later } as FilterQuery<NodeRecord>;
}

/**
 * The filter of `node_id_contains`: ids containing `text`, case-insensitive, its `%`, `_`
 * and `\` taken literally; none for "".
 * @throws ControlError `invalid_argument` past {@link MAX_NODE_ID_SEARCH} characters.
 */
export function nodeIdContains(text: string): FilterQuery<NodeRecord> | undefined {
  const wanted = text.trim();
  if (wanted === "") return undefined;
  if (wanted.length > MAX_NODE_ID_SEARCH) {
    throw new ControlError(
      "invalid_argument",
      `node_id_contains: at most ${MAX_NODE_ID_SEARCH} characters (got ${wanted.length})`,
      { field: "node_id_contains" },
    );
  }
  const literal = wanted.replace(/[\\%_]/g, (c) => `\\${c}`);
  return { id: { $ilike: `%${literal}%` } } as FilterQuery<NodeRecord>;
}
