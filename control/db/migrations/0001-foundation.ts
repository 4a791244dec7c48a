/** The node registry, join tokens and the audit log. */
import { Migration } from "@mikro-orm/migrations";

export class Migration0001Foundation extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table nodes (
        id text primary key,
        labels jsonb not null default '{}',
        pool text not null default 'default',
        platform text not null default '',
        agent_version text not null default '',
        previous_version text not null default '',
        boot_id text not null default '',
        capabilities jsonb not null default '[]',
        confirmed_sequence bigint not null default 0,
        first_seen timestamptz,
        last_seen timestamptz,
        online boolean not null default false,
        enabled boolean not null default true,
        disabled_reason text not null default '',
        token_hash text,
        token_issued_at timestamptz,
        join_token_id text,
        session_id text,
        version integer not null default 1,
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now()
      )`);
    this.addSql("create index nodes_labels_idx on nodes using gin (labels jsonb_path_ops)");
    this.addSql("create index nodes_online_idx on nodes (online)");
    this.addSql("create index nodes_pool_idx on nodes (pool)");
    this.addSql(`
      create table join_tokens (
        id text primary key,
        secret_hash text not null,
        description text not null default '',
        created_at timestamptz not null,
        expires_at timestamptz not null,
        revoked_at timestamptz,
        uses integer not null default 0,
        created_by text not null default ''
      )`);
    this.addSql(`
      create table audit_events (
        id bigserial primary key,
        time timestamptz not null,
        actor text not null,
        actor_ip text not null default '',
        action text not null,
        campaign_id text,
        node_id text,
        message text not null default '',
        detail jsonb not null default '{}'
      )`);
    this.addSql("create index audit_events_campaign_idx on audit_events (campaign_id, id desc)");
    this.addSql("create index audit_events_action_idx on audit_events (action, id desc)");
  }
}
