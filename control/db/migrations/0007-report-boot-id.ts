import { Migration } from "@mikro-orm/migrations";

/**
 * The boot id of the session an operation's latest report arrived on: a report from a boot
 * after the offer is the re-sent offer in progress, not a revert.
 */
export class Migration0007ReportBootId extends Migration {
  override async up(): Promise<void> {
    this.addSql("alter table campaign_operations add column report_boot_id text");
  }

  override async down(): Promise<void> {
    this.addSql("alter table campaign_operations drop column report_boot_id");
  }
}
