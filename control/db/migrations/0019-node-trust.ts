import { Migration } from "@mikro-orm/migrations";

/**
 * What each node's Agent last reported of its TUF metadata (TrustStatus): since when it is
 * frozen (null: not frozen, or never reported) and why. Expand-only: two columns a Control
 * that predates them ignores.
 */
export class Migration0019NodeTrust extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table nodes
      add column trust_frozen_since timestamptz null,
      add column trust_reason text not null default ''`);
  }

  override async down(): Promise<void> {
    this.addSql("alter table nodes drop column trust_frozen_since, drop column trust_reason");
  }
}
