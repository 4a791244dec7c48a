/**
 * Registered releases. The envelope is stored exactly as registered (its bytes, never a
 * re-serialisation), with what Control read from it for queries.
 */
import { BigIntType, EntitySchema } from "@mikro-orm/core";

/** One platform's artifact of a release. */
export interface StoredArtifact {
  platform: string;
  sha256: string;
  size: number;
  /** The manifest's url; empty when Control serves the file itself. */
  url: string;
}

/** A release as stored. */
export interface ReleaseRecord {
  version: string;
  sequence: number;
  /** The envelope file bytes as registered. */
  envelope: Buffer;
  envelopeSha256: string;
  expiresAt: Date;
  registeredAt: Date;
  registeredBy: string;
  signerKeyIds: string[];
  artifacts: StoredArtifact[];
  /** When an operator yanked it (`agentctl release yank`); null: not yanked. */
  yankedAt?: Date | null;
  yankedBy?: string | null;
  yankReason?: string | null;
}

/** MikroORM schema of {@link ReleaseRecord} (table `releases`). */
export const ReleaseEntity = new EntitySchema<ReleaseRecord>({
  name: "ReleaseRecord",
  tableName: "releases",
  properties: {
    version: { type: "string", primary: true, columnType: "text" },
    sequence: { type: new BigIntType("number"), unique: true },
    envelope: { type: "Buffer", columnType: "bytea", lazy: true },
    envelopeSha256: { type: "string", columnType: "text", unique: true },
    expiresAt: { type: "Date", columnType: "timestamptz" },
    registeredAt: { type: "Date", columnType: "timestamptz" },
    registeredBy: { type: "string", columnType: "text" },
    signerKeyIds: { type: "json" },
    artifacts: { type: "json" },
    yankedAt: { type: "Date", columnType: "timestamptz", nullable: true },
    yankedBy: { type: "string", columnType: "text", nullable: true },
    yankReason: { type: "string", columnType: "text", nullable: true },
  },
});
