import { Migration } from "@mikro-orm/migrations";

/**
 * `campaign_operations.late_sent_at`: when a finished campaign's rollback was last delivered as
 * a late rollback (control/campaign/late-rollback.ts). From then it holds a slot of its node's
 * pool's disruption budget until its agent reports on it, says Hello on its previous release,
 * or one reconnect timeout has passed; every decision's read of its pools counts such rows
 * (`lateInFlight`, control/campaign-store/sql/late-rollbacks.ts) through the partial index of
 * the rows ever delivered late, so the read never walks the outbox's history. Expand-only: a
 * nullable column and an index the previous release never reads (it re-sends a finished
 * campaign's rollback without admission, as before).
 */
export class Migration0026LateRollbackSlot extends Migration {
  override async up(): Promise<void> {
    this.addSql("alter table campaign_operations add column late_sent_at timestamptz null");
    this.addSql(`create index campaign_operations_late_sent_idx on campaign_operations (late_sent_at)
      where late_sent_at is not null`);
  }

  override async down(): Promise<void> {
    this.addSql("drop index campaign_operations_late_sent_idx");
    this.addSql("alter table campaign_operations drop column late_sent_at");
  }
}
