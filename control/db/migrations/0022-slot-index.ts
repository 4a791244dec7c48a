import { Migration } from "@mikro-orm/migrations";

/**
 * The states a node may hold a slot in, as the predicate of {@link Migration0022SlotIndex}'s
 * partial index: written out, not derived, because a landed migration never changes. The
 * engine's traits (`SLOT_NODE_STATES`, control/campaign/node-state-traits.ts) must list the
 * same states in the same order (test/unit/db/slot-index-predicate.test.ts); when they change,
 * a new migration builds an index on the new list.
 */
export const SLOT_INDEX_STATES = [
  "offered",
  "applying",
  "restarting",
  "verifying",
  "rolling_back",
] as const;

/**
 * A partial index of the campaign nodes that may hold a slot of the pool's disruption budget:
 * those of migration 0013's index (offered, applying, restarting, verifying) and the nodes
 * rolling back, which restart onto their previous release and count against the budget as
 * well. Every decision counts them per pool in the other unfinished campaigns; PostgreSQL reads
 * a partial index only for a query whose predicate implies the index's, so that count moves to
 * this index. Expand-only: 0013's index stays for the previous release, whose count still reads
 * through it; a release that no longer runs beside that one may drop it.
 */
export class Migration0022SlotIndex extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create index campaign_nodes_slot_idx on campaign_nodes (pool)
      where state in (${SLOT_INDEX_STATES.map((s) => `'${s}'`).join(", ")})`);
  }

  override async down(): Promise<void> {
    this.addSql("drop index campaign_nodes_slot_idx");
  }
}
