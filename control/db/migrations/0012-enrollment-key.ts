import { Migration } from "@mikro-orm/migrations";

/**
 * The SHA-256 of the enrollment key a node enrolled with, until its node token is first
 * used: a retry of an enrollment whose Welcome was lost (same join token, same key) enrolls
 * the node again instead of being refused as already enrolled.
 */
export class Migration0012EnrollmentKey extends Migration {
  override async up(): Promise<void> {
    this.addSql("alter table nodes add column enrollment_key_hash text");
  }

  override async down(): Promise<void> {
    this.addSql("alter table nodes drop column enrollment_key_hash");
  }
}
