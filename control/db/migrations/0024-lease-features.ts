import { Migration } from "@mikro-orm/migrations";

/**
 * The engine features the holder of a lease knows (`control/campaign/engine-features.ts`),
 * with the epoch it recorded them at: a Control that is not the leader takes the lease over
 * when an unfinished campaign records features it knows and the holder does not
 * (`control/campaign-store/sql/lease.ts`). A holder that records none (the previous release,
 * whose takeover moves `epoch` and leaves these alone) is told by `features_epoch` differing
 * from `epoch`. Expand-only: two nullable columns the previous release never reads.
 */
export class Migration0024LeaseFeatures extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      "alter table control_leases add column engine_features text[] null, add column features_epoch bigint null",
    );
  }

  override async down(): Promise<void> {
    this.addSql(
      "alter table control_leases drop column engine_features, drop column features_epoch",
    );
  }
}
