/**
 * Active-active Controls: which Control holds each node's stream (`nodes.held_by`, set with
 * `online` by the Hello write, cleared with it at the stream's end), and the Control processes
 * running on this database (`control_instances`), so any Control can tell a node held by a
 * live Control from one held by a Control that is gone.
 */
import { Migration } from "@mikro-orm/migrations";

export class Migration0006ActiveActive extends Migration {
  override async up(): Promise<void> {
    this.addSql("alter table nodes add column held_by text");
    this.addSql("create index nodes_held_by_idx on nodes (held_by) where online");
    this.addSql(`
      create table control_instances (
        id text primary key,
        backend_pid integer not null,
        name text not null default '',
        started_at timestamptz not null,
        seen_at timestamptz not null
      )`);
  }
}
