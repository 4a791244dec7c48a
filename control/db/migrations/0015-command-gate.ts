import { Migration } from "@mikro-orm/migrations";

/**
 * The gate an administrator's `skip_gate` command names (its index in the campaign's spec);
 * null for every other kind of command.
 */
export class Migration0015CommandGate extends Migration {
  override async up(): Promise<void> {
    this.addSql("alter table campaign_commands add column gate integer");
  }

  override async down(): Promise<void> {
    this.addSql("alter table campaign_commands drop column gate");
  }
}
