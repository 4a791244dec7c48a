import { Migration } from "@mikro-orm/migrations";

/**
 * The final states a node may hold a slot in while a rollback sent to it is pending, as the
 * predicate of {@link Migration0025RollbackSlotIndex}'s partial index: written out, not derived,
 * because a landed migration never changes. The engine's traits (`ROLLBACK_SLOT_NODE_STATES`,
 * control/campaign/node-state-traits.ts) must list the same states in the same order
 * (test/unit/db/slot-index-predicate.test.ts); when they change, a new migration builds an
 * index on the new list.
 */
export const ROLLBACK_SLOT_INDEX_STATES = ["failed", "timed_out", "skipped", "canceled"] as const;

/**
 * A partial index of the final campaign nodes sent their campaign's rollback whose outcome is
 * not recorded yet: they hold a slot of the pool's disruption budget while the rollback is
 * pending (their agent may be restarting onto its previous release). The pool-budget read of
 * every decision counts them beside the rows of `campaign_nodes_slot_idx` (migration 0022), one
 * arm of an `or` each, so PostgreSQL reads both indexes (a BitmapOr) instead of every final
 * node of the campaigns' history. The predicate's record tests are those of the read
 * (`rollbackUnjudgedSql`, control/campaign-store/sql/node-state-sql.ts), word for word.
 * Expand-only: an index the previous release never reads.
 */
export class Migration0025RollbackSlotIndex extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create index campaign_nodes_rollback_slot_idx on campaign_nodes (pool)
      where state in (${ROLLBACK_SLOT_INDEX_STATES.map((s) => `'${s}'`).join(", ")})
        and (record->>'rollbackOperationId') is not null and (record->>'rollbackResult') is null`);
  }

  override async down(): Promise<void> {
    this.addSql("drop index campaign_nodes_rollback_slot_idx");
  }
}
