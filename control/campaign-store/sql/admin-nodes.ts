/**
 * The PostgreSQL adapter of {@link AdminNodes}: plain statements on `nodes` in the caller's
 * transaction (the agent server writes the same rows in plain SQL, so no managed entity and no
 * version check that a heartbeat would fail), and the notifications sent by the transaction
 * that wrote (PostgreSQL delivers them on commit): the cut-off of an invalidated credential,
 * and the node registry's change of an enable or a disable.
 */
import { CUTOFF_CHANNEL, NODES_CHANNEL } from "../../shared/notify-channels.js";
import type { AdminNodeRow, AdminNodes } from "../admin-port.js";
import type { Queryable } from "./reads.js";

/** The admin node writes over `q`, a client inside `begin … commit`. */
export function sqlAdminNodes(q: Queryable): AdminNodes {
  return {
    async readNode(id): Promise<AdminNodeRow | undefined> {
      const result = await q.query<{
        id: string;
        enabled: boolean;
        disabled_reason: string;
        reset_at: Date | null;
      }>("select id, enabled, disabled_reason, reset_at from nodes where id = $1", [id]);
      const r = result.rows[0];
      if (r === undefined) return undefined;
      return {
        id: r.id,
        enabled: r.enabled,
        disabledReason: r.disabled_reason,
        resetAt: r.reset_at?.getTime(),
      };
    },
    async setEnabled(id, enabled, reason, now) {
      const result = await q.query(
        `update nodes set enabled = $2, disabled_reason = $3, updated_at = $4,
           version = version + 1
         where id = $1`,
        [id, enabled, enabled ? "" : reason, now],
      );
      if ((result.rowCount ?? 0) === 0) return false;
      // The leader re-reads the row before its next decision of the node's campaign: a
      // disabled node is skipped there, not found only when an offer reaches it.
      await q.query("select pg_notify($1, $2)", [NODES_CHANNEL, id]);
      return true;
    },
    async resetCredential(id, now) {
      const result = await q.query(
        `update nodes set token_hash = null, token_issued_at = null, reset_at = $2,
           version = version + 1, updated_at = $2
         where id = $1`,
        [id, now],
      );
      if ((result.rowCount ?? 0) === 0) return false;
      await q.query("select pg_notify($1, $2)", [CUTOFF_CHANNEL, id]);
      return true;
    },
  };
}
