import { Migration } from "@mikro-orm/migrations";

/**
 * Enrollment that a leaked join token cannot abuse, and a node identity that can be cut off:
 * - `join_tokens.max_uses` (null: no limit) is enforced by the enrollment statement, which
 *   counts in `join_tokens.uses` (back-filled with the nodes each token enrolled so far);
 * - `join_tokens.labels` and `nodes.assigned_labels`: the labels a join token or an
 *   administrator assigns, which win over the node's reported ones;
 * - `nodes.pending` (waiting for approval) and `nodes.revoked_at` (cut off until it enrolls
 *   again), and the fingerprint and expiry of the client certificate it last connected with;
 * - `denied_certificates`: client certificate fingerprints refused until they expire.
 */
export class Migration0014EnrollmentTrust extends Migration {
  override async up(): Promise<void> {
    this.addSql("alter table join_tokens add column max_uses integer");
    this.addSql("alter table join_tokens add column labels jsonb not null default '{}'");
    this.addSql(`update join_tokens set uses = (select count(*) from nodes
      where nodes.join_token_id = join_tokens.id)`);
    this.addSql("alter table nodes add column assigned_labels jsonb not null default '{}'");
    this.addSql("alter table nodes add column pending boolean not null default false");
    this.addSql("alter table nodes add column revoked_at timestamptz");
    this.addSql("alter table nodes add column cert_fingerprint text");
    this.addSql("alter table nodes add column cert_expires_at timestamptz");
    this.addSql(`create table denied_certificates (
      fingerprint text primary key,
      node_id text not null,
      denied_at timestamptz not null,
      expires_at timestamptz not null)`);
  }

  override async down(): Promise<void> {
    this.addSql("drop table denied_certificates");
    this.addSql("alter table nodes drop column cert_expires_at");
    this.addSql("alter table nodes drop column cert_fingerprint");
    this.addSql("alter table nodes drop column revoked_at");
    this.addSql("alter table nodes drop column pending");
    this.addSql("alter table nodes drop column assigned_labels");
    this.addSql("alter table join_tokens drop column labels");
    this.addSql("alter table join_tokens drop column max_uses");
  }
}
