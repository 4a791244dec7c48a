/**
 * One node of a campaign as stored: the engine's full {@link CampaignNode} in `record`
 * (JSON, times in epoch ms) plus copies of the columns queries filter on.
 */
import { EntitySchema } from "@mikro-orm/core";
import type { CampaignNode } from "../../campaign/index.js";

/** A campaign-node row (primary key: campaign id and node id). */
export interface CampaignNodeRecord {
  campaignId: string;
  nodeId: string;
  batch: number;
  ord: number;
  state: string;
  code: string | null;
  pool: string;
  updatedAt: Date;
  finishedAt: Date | null;
  record: CampaignNode;
}

/** MikroORM schema of {@link CampaignNodeRecord} (table `campaign_nodes`). */
export const CampaignNodeEntity = new EntitySchema<CampaignNodeRecord>({
  name: "CampaignNodeRecord",
  tableName: "campaign_nodes",
  properties: {
    campaignId: { type: "string", primary: true, columnType: "text" },
    nodeId: { type: "string", primary: true, columnType: "text" },
    batch: { type: "integer" },
    ord: { type: "integer" },
    state: { type: "string", columnType: "text" },
    code: { type: "string", columnType: "text", nullable: true },
    pool: { type: "string", columnType: "text" },
    updatedAt: { type: "Date", columnType: "timestamptz" },
    finishedAt: { type: "Date", columnType: "timestamptz", nullable: true },
    record: { type: "json" },
  },
});
