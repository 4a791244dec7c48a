import { Migration } from "@mikro-orm/migrations";

/**
 * Settings one fleet shares across its Controls, fixed once (expand-only):
 * - `fleet_settings (name, value)`;
 * - `canary_order_secret`: two `gen_random_uuid()` joined (244 random bits), created here once, so every Control keys
 *   canary order alike and nobody outside the database can predict it;
 * - Control adds `tuf.timestampWindow:<timestamp key id>` at its first start with a TUF channel.
 */
export class Migration0017FleetSettings extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table fleet_settings (
      name text primary key,
      value text not null,
      set_at timestamptz not null default now())`);
    this.addSql(`insert into fleet_settings (name, value) values ('canary_order_secret',
      replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''))`);
  }

  override async down(): Promise<void> {
    this.addSql("drop table fleet_settings");
  }
}
