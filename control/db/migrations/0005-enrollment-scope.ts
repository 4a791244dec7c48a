/**
 * Who may re-enroll an existing node. A join token enrolls only new node ids unless it was
 * created for named ids (`node_ids`: only those, new or existing) or with `allow_reenroll`
 * (any existing id). `nodes.reset_at` is set by an operator's `ResetNode` and cleared by the
 * next join-token enrollment of that node, which it lets through once. Tokens issued before
 * this migration keep the safe default: new node ids only.
 */
import { Migration } from "@mikro-orm/migrations";

export class Migration0005EnrollmentScope extends Migration {
  override async up(): Promise<void> {
    this.addSql("alter table join_tokens add column node_ids jsonb not null default '[]'");
    this.addSql("alter table join_tokens add column allow_reenroll boolean not null default false");
    this.addSql("alter table nodes add column reset_at timestamptz");
  }
}
