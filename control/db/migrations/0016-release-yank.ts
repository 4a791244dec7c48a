import { Migration } from "@mikro-orm/migrations";

/**
 * Yanked releases (`agentctl release yank`): when, by whom and why a release was yanked. A
 * yanked release stays registered (campaigns and nodes name it) but is never offered again.
 * Expand-only: three nullable columns; a Control that predates them ignores them.
 */
export class Migration0016ReleaseYank extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table releases
      add column yanked_at timestamptz null,
      add column yanked_by text null,
      add column yank_reason text null`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table releases
      drop column yanked_at, drop column yanked_by, drop column yank_reason`);
  }
}
