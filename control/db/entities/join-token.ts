/**
 * Join tokens let new nodes enroll; stored as the hash of their secret. By default a join
 * token enrolls only node ids that do not exist yet; `nodeIds` and `allowReenroll` are an
 * operator's explicit leave to re-enroll existing ones.
 */
import { EntitySchema } from "@mikro-orm/core";

/** A join token as stored. */
export interface JoinTokenRecord {
  id: string;
  /** Hex SHA-256 of the secret part. */
  secretHash: string;
  description: string;
  createdAt: Date;
  expiresAt: Date;
  revokedAt: Date | null;
  /** Enrollments it counted (nodes created, re-enrollments); never above `maxUses`. */
  uses: number;
  /** The most enrollments it allows; null: no limit. */
  maxUses: number | null;
  /** Labels every node it enrolls receives as assigned labels. */
  labels: Record<string, string>;
  createdBy: string;
  /** When not empty, the only node ids this token may enroll, new or existing. */
  nodeIds: string[];
  /** Whether this token may re-enroll any node id that already exists. */
  allowReenroll: boolean;
}

/** MikroORM schema of {@link JoinTokenRecord} (table `join_tokens`). */
export const JoinTokenEntity = new EntitySchema<JoinTokenRecord>({
  name: "JoinTokenRecord",
  tableName: "join_tokens",
  properties: {
    id: { type: "string", primary: true, columnType: "text" },
    secretHash: { type: "string", columnType: "text" },
    description: { type: "string", columnType: "text" },
    createdAt: { type: "Date", columnType: "timestamptz" },
    expiresAt: { type: "Date", columnType: "timestamptz" },
    revokedAt: { type: "Date", nullable: true, columnType: "timestamptz" },
    uses: { type: "integer" },
    maxUses: { type: "integer", nullable: true },
    labels: { type: "json" },
    createdBy: { type: "string", columnType: "text" },
    nodeIds: { type: "json" },
    allowReenroll: { type: "boolean" },
  },
});
