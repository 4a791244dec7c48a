/**
 * The node list's sort: a column the admin API sorts by (ListNodes' `order_by`) and a
 * direction; clicking a column's header sorts by it, clicking it again reverses it.
 */

/** The columns ListNodes sorts by. */
export type NodeSortField = "node_id" | "pool" | "agent_version" | "last_seen";

/** A sort of the node list. */
export interface NodeSort {
  readonly field: NodeSortField;
  readonly descending: boolean;
}

/** ListNodes' `order_by` of `sort`. */
export function orderByOf(sort: NodeSort): string {
  return sort.descending ? `${sort.field} desc` : sort.field;
}

/** The sort after a click on `field`'s header: that column ascending, or reversed if it was the sort. */
export function nextSort(sort: NodeSort, field: NodeSortField): NodeSort {
  return sort.field === field
    ? { field, descending: !sort.descending }
    : { field, descending: false };
}

/** The mark after a header's label: an arrow on the column sorted by, nothing on the others. */
export function sortMark(sort: NodeSort, field: NodeSortField): string {
  if (sort.field !== field) return "";
  return sort.descending ? " ▼" : " ▲";
}
