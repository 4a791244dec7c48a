/** Join tokens let a new node enroll once; stored as the hash of their secret. */
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
  uses: number;
  createdBy: string;
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
    createdBy: { type: "string", columnType: "text" },
  },
});
