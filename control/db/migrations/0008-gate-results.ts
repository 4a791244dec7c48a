import { Migration } from "@mikro-orm/migrations";

/**
 * The latest result of each outside health gate of a campaign, per batch: written by the
 * leader's worker after each evaluation, read by each decision of the campaign as facts. A
 * failing result is kept against later ones until a resume accepts it (see the SQL store).
 */
export class Migration0008GateResults extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table campaign_gate_results (
        campaign_id text not null references campaigns (id) on delete cascade,
        batch integer not null,
        gate integer not null,
        status text not null check (status in ('pass', 'fail', 'unreachable')),
        at timestamptz not null,
        value text not null,
        message text not null,
        unreachable_since timestamptz,
        primary key (campaign_id, batch, gate)
      )`);
  }

  override async down(): Promise<void> {
    this.addSql("drop table campaign_gate_results");
  }
}
