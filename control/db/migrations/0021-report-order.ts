import { Migration } from "@mikro-orm/migrations";

/**
 * The database's own order of reports: `campaign_report_seq` numbers each report a Control
 * keeps on an outbox row (`campaign_operations.report_seq`), so reports are ordered by when the
 * database took them, never by the stamps of the Controls that received them (their clocks may
 * disagree by seconds). Expand-only: a sequence and a nullable column, which a Control that
 * predates them ignores (its reports keep a null or an older number; see docs/decisions.md,
 * "One clock for ordering across Controls").
 */
export class Migration0021ReportOrder extends Migration {
  override async up(): Promise<void> {
    this.addSql("create sequence campaign_report_seq");
    this.addSql("alter table campaign_operations add column report_seq bigint null");
  }

  override async down(): Promise<void> {
    this.addSql("alter table campaign_operations drop column report_seq");
    this.addSql("drop sequence campaign_report_seq");
  }
}
