import { Migration } from "@mikro-orm/migrations";

/**
 * Desired versions: the release each selector's nodes should run (recorded when a campaign
 * completes, or set by an administrator), and the mark that a completed campaign was recorded.
 * Campaigns that finished before this migration are marked recorded: upgrading Control does
 * not start converging the fleet to the targets of old campaigns.
 */
export class Migration0010DesiredVersions extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table desired_versions (
        id text primary key,
        selector jsonb not null,
        exclude jsonb not null,
        target_version text not null,
        target_sequence bigint not null,
        set_at timestamptz not null,
        set_by text not null,
        settings jsonb not null,
        halted_at timestamptz,
        halted_reason text
      )`);
    this.addSql("alter table campaigns add column desired_recorded_at timestamptz");
    this.addSql("update campaigns set desired_recorded_at = now() where finished_at is not null");
    this.addSql(
      "create index campaigns_unrecorded_idx on campaigns (finished_at) where desired_recorded_at is null and phase = 'completed'",
    );
    this.addSql("create index campaigns_created_by_idx on campaigns (created_by text_pattern_ops)");
  }

  override async down(): Promise<void> {
    this.addSql("drop index campaigns_created_by_idx");
    this.addSql("drop index campaigns_unrecorded_idx");
    this.addSql("alter table campaigns drop column desired_recorded_at");
    this.addSql("drop table desired_versions");
  }
}
