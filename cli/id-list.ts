/**
 * Lists of node ids as a table or a sentence prints them: whole when short (or asked for), else
 * the first few and how many more, so one field stays readable at 10,000 nodes. `--json` and
 * `-o wide` carry every id.
 */

/** How many ids a shortened list names. */
export const IDS_SHOWN = 10;

/**
 * `ids` joined by commas; past {@link IDS_SHOWN} (unless `all`), the first ones and
 * "… and N more (-o wide lists all)".
 */
export function idList(ids: readonly string[], all = false): string {
  if (all || ids.length <= IDS_SHOWN) return ids.join(",");
  return `${ids.slice(0, IDS_SHOWN).join(",")},… and ${ids.length - IDS_SHOWN} more (-o wide lists all)`;
}
