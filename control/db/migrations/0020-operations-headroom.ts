import { Migration } from "@mikro-orm/migrations";

/**
 * Leaves 30 % of each `campaign_operations` page free (fillfactor 70). Every operation row is
 * updated several times after its insert (the send stamp, then one report per phase); with
 * room on its page the new version stays there and, when no indexed column changes, no index
 * is touched (a HOT update). Measured on 10,000 rows: a 1,000-row report write 1.2–3× faster
 * and a third to a half of the WAL. Applies to pages written from now on; a storage
 * parameter, so the previous release reads and writes the table as before.
 */
export class Migration0020OperationsHeadroom extends Migration {
  override async up(): Promise<void> {
    this.addSql("alter table campaign_operations set (fillfactor = 70)");
  }

  override async down(): Promise<void> {
    this.addSql("alter table campaign_operations reset (fillfactor)");
  }
}
