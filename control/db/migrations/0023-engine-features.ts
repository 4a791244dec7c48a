import { Migration } from "@mikro-orm/migrations";

/**
 * The engine features each campaign uses (`control/campaign/engine-features.ts`), recorded by the
 * Control that created it: a Control leads a campaign only when it knows each of them, and steps
 * aside from it otherwise. A column apart from the `state` JSON, because a release that does not
 * know it never rewrites it (the previous release rebuilds `state` from the keys it knows and
 * would drop a field there). Expand-only: a column with a default; a campaign the previous
 * release creates gets the empty list, which every release knows.
 */
export class Migration0023EngineFeatures extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      "alter table campaigns add column engine_features text[] not null default '{}'::text[]",
    );
  }

  override async down(): Promise<void> {
    this.addSql("alter table campaigns drop column engine_features");
  }
}
