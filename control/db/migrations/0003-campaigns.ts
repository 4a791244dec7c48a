/**
 * Campaigns: the campaign and campaign-node records of the engine, the operations outbox
 * (with the latest report per operation, so facts survive a restart), persisted config
 * failures, administrator commands waiting for the leader, and the leader lease.
 */
import { Migration } from "@mikro-orm/migrations";

export class Migration0003Campaigns extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table campaigns (
        id text primary key,
        target_version text not null,
        target_sequence bigint not null,
        phase text not null,
        current_batch integer not null,
        code text,
        state jsonb not null,
        created_by text not null,
        created_by_ip text not null default '',
        retry_of text,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        finished_at timestamptz,
        version integer not null default 1
      )`);
    this.addSql("create index campaigns_live_idx on campaigns (id) where finished_at is null");
    this.addSql("create index campaigns_newest_idx on campaigns (created_at desc, id desc)");
    this.addSql(`
      create table campaign_nodes (
        campaign_id text not null references campaigns (id),
        node_id text not null,
        batch integer not null,
        ord integer not null,
        state text not null,
        code text,
        pool text not null,
        updated_at timestamptz not null,
        finished_at timestamptz,
        record jsonb not null,
        primary key (campaign_id, node_id)
      )`);
    this.addSql("create index campaign_nodes_node_idx on campaign_nodes (node_id)");
    this.addSql("create index campaign_nodes_order_idx on campaign_nodes (campaign_id, ord)");
    this.addSql(`
      create table campaign_operations (
        id text primary key,
        campaign_id text not null references campaigns (id),
        node_id text not null,
        kind text not null,
        payload bytea,
        created_at timestamptz not null,
        last_sent_at timestamptz,
        send_count integer not null default 0,
        acked_at timestamptz,
        report_phase text,
        report_code text,
        report_message text,
        report_version text,
        report_at timestamptz,
        failed_at timestamptz,
        failure text
      )`);
    this.addSql(
      "create index campaign_operations_unacked_idx on campaign_operations (node_id) where acked_at is null and failed_at is null",
    );
    this.addSql(
      "create index campaign_operations_campaign_idx on campaign_operations (campaign_id, node_id)",
    );
    this.addSql(`
      create table campaign_config_failures (
        id bigserial primary key,
        campaign_id text not null references campaigns (id),
        node_id text not null,
        at timestamptz not null,
        boot_id text,
        message text not null default ''
      )`);
    this.addSql(
      "create index campaign_config_failures_idx on campaign_config_failures (campaign_id, node_id)",
    );
    this.addSql(`
      create table campaign_commands (
        id bigserial primary key,
        campaign_id text not null references campaigns (id),
        kind text not null,
        rollback boolean not null default false,
        reason text not null default '',
        actor text not null,
        actor_ip text not null default '',
        created_at timestamptz not null,
        applied_at timestamptz,
        outcome text
      )`);
    this.addSql(
      "create index campaign_commands_pending_idx on campaign_commands (campaign_id, id) where applied_at is null",
    );
    this.addSql(`
      create table control_leases (
        name text primary key,
        holder text not null,
        holder_pid integer not null,
        epoch bigint not null,
        expires_at timestamptz not null
      )`);
  }
}
