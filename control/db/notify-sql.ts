/**
 * Notifications sent by the very statement that changed the rows they name, so a listener
 * hears of a change exactly when it commits (never before, never without it).
 */
import { NODES_CHANNEL } from "../shared/notify-channels.js";

/** Ids per payload stay under this many bytes (PostgreSQL refuses 8000 or more). */
const CHUNK_BYTES = 7000;

/**
 * A final `select` that notifies {@link NODES_CHANNEL} of the `id`s of the CTE `cte` (an
 * `update … returning id`), one line per id, in payloads under PostgreSQL's limit. It counts
 * the notifications as `notified` (none when no row changed). Node ids are at most 128
 * characters, so a payload never exceeds {@link CHUNK_BYTES} by more than one id.
 */
export function notifyNodeIds(cte: string): string {
  return `select count(*)::int as notified from (
    select pg_notify('${NODES_CHANNEL}', string_agg(id, E'\\n' order by id)) from (
      select id, (sum(octet_length(id) + 1) over (order by id)) / ${CHUNK_BYTES} as chunk
        from ${cte}
    ) chunked group by chunk
  ) sent`;
}
