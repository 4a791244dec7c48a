import { Migration } from "@mikro-orm/migrations";

/**
 * The schema's release, one row (`schema_release`): Control reads it before migrating and
 * refuses a schema more than one release ahead of its own, and records its own release after
 * migrating (control/db/schema-release.ts). Expand-only: a new table the previous release
 * never reads.
 */
export class Migration0018SchemaRelease extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table schema_release (
      singleton boolean primary key default true check (singleton),
      release integer not null check (release >= 1),
      recorded_at timestamptz not null default now())`);
  }

  override async down(): Promise<void> {
    this.addSql("drop table schema_release");
  }
}
