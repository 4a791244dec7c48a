/**
 * Campaigns as stored. The engine's full {@link CampaignState} is the `state` column (JSON,
 * times in epoch ms); the columns beside it are copies for queries and listing, written in
 * the same statement, never read back into the engine.
 */
import { BigIntType, EntitySchema } from "@mikro-orm/core";
import type { CampaignState } from "../../campaign/index.js";

/** A campaign row. */
export interface CampaignRecord {
  id: string;
  targetVersion: string;
  targetSequence: number;
  phase: string;
  currentBatch: number;
  code: string | null;
  state: CampaignState;
  createdBy: string;
  createdByIp: string;
  retryOf: string | null;
  createdAt: Date;
  updatedAt: Date;
  /** Set once the phase has ended and every node is final. */
  finishedAt: Date | null;
  /** Bumped by every write: a writer that read an older version fails. */
  version: number;
}

/** MikroORM schema of {@link CampaignRecord} (table `campaigns`). */
export const CampaignEntity = new EntitySchema<CampaignRecord>({
  name: "CampaignRecord",
  tableName: "campaigns",
  properties: {
    id: { type: "string", primary: true, columnType: "text" },
    targetVersion: { type: "string", columnType: "text" },
    targetSequence: { type: new BigIntType("number") },
    phase: { type: "string", columnType: "text" },
    currentBatch: { type: "integer" },
    code: { type: "string", columnType: "text", nullable: true },
    state: { type: "json" },
    createdBy: { type: "string", columnType: "text" },
    createdByIp: { type: "string", columnType: "text" },
    retryOf: { type: "string", columnType: "text", nullable: true },
    createdAt: { type: "Date", columnType: "timestamptz" },
    updatedAt: { type: "Date", columnType: "timestamptz" },
    finishedAt: { type: "Date", columnType: "timestamptz", nullable: true },
    version: { type: "integer", version: true },
  },
});
