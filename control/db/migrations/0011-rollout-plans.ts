import { Migration } from "@mikro-orm/migrations";

/** Rollout plans (staged groups): the plan record as JSON, with its phase copied for queries. */
export class Migration0011RolloutPlans extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table rollout_plans (
        id text primary key,
        phase text not null,
        state jsonb not null,
        created_by text not null,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        version integer not null default 1
      )`);
    this.addSql(
      "create index rollout_plans_live_idx on rollout_plans (id) where phase = 'running'",
    );
  }

  override async down(): Promise<void> {
    this.addSql("drop table rollout_plans");
  }
}
