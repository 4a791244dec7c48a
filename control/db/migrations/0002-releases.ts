/** Registered releases and the artifact files Control serves. */
import { Migration } from "@mikro-orm/migrations";

export class Migration0002Releases extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table releases (
        version text primary key,
        sequence bigint not null unique,
        envelope bytea not null,
        envelope_sha256 text not null unique,
        expires_at timestamptz not null,
        registered_at timestamptz not null,
        registered_by text not null,
        signer_key_ids jsonb not null,
        artifacts jsonb not null
      )`);
    this.addSql(`
      create table artifact_files (
        sha256 text primary key,
        size bigint not null,
        content bytea not null,
        created_at timestamptz not null default now()
      )`);
  }
}
