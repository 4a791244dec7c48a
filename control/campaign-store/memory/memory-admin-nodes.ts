/**
 * The memory adapter of {@link AdminNodes}, over the registry of a {@link MemoryCampaignStore}:
 * writes are staged on the transaction and applied on commit, and a reset's cut-off and an
 * enable's or disable's registry change go out through the store's own notifications after
 * the commit (as PostgreSQL delivers them).
 */
import { CUTOFF_CHANNEL, NODES_CHANNEL } from "../../shared/notify-channels.js";
import type { AdminNodeRow, AdminNodes } from "../admin-port.js";
import type { MemoryCampaignStore } from "./memory-store.js";
import type { MemoryTransaction } from "./memory-transaction.js";

/** The admin node writes of one memory transaction `ctx` of `store`. */
export function memoryAdminNodes(store: MemoryCampaignStore, ctx: MemoryTransaction): AdminNodes {
  const registry = store.tables.registry;
  return {
    async readNode(id): Promise<AdminNodeRow | undefined> {
      const r = registry.get(id);
      if (r === undefined) return undefined;
      return {
        id: r.id,
        enabled: r.enabled,
        disabledReason: r.enabled ? "" : (r.disabled_reason ?? ""),
        resetAt: r.reset_at?.getTime(),
      };
    },
    async setEnabled(id, enabled, reason, now) {
      if (!registry.has(id)) return false;
      const disabled_reason = enabled ? "" : reason;
      ctx.stage(() => {
        const row = registry.get(id);
        if (row) registry.set(id, { ...row, enabled, disabled_reason, updated_at: now });
        queueMicrotask(() => {
          store.notify(NODES_CHANNEL, [id]).catch(() => {
            // A store down by then loses the hint; the offer that reaches the node finds it.
          });
        });
      });
      return true;
    },
    async resetCredential(id, now) {
      if (!registry.has(id)) return false;
      ctx.stage(() => {
        const row = registry.get(id);
        if (row) registry.set(id, { ...row, reset_at: now, updated_at: now });
        queueMicrotask(() => {
          store.notify(CUTOFF_CHANNEL, [id]).catch(() => {
            // A store down by then loses the hint; the stream ends at its next check.
          });
        });
      });
      return true;
    },
  };
}
