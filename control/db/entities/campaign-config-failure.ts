/** A `ConfigStatus { ok: false }` from a node of a live campaign, kept as a decision fact. */
import { EntitySchema } from "@mikro-orm/core";

/** A config failure row. */
export interface CampaignConfigFailureRecord {
  id: string;
  campaignId: string;
  nodeId: string;
  at: Date;
  /** The boot id of the session it arrived on. */
  bootId: string | null;
  message: string;
}

/** MikroORM schema of {@link CampaignConfigFailureRecord} (table `campaign_config_failures`). */
export const CampaignConfigFailureEntity = new EntitySchema<CampaignConfigFailureRecord>({
  name: "CampaignConfigFailureRecord",
  tableName: "campaign_config_failures",
  properties: {
    id: { type: "bigint", primary: true, autoincrement: true },
    campaignId: { type: "string", columnType: "text" },
    nodeId: { type: "string", columnType: "text" },
    at: { type: "Date", columnType: "timestamptz" },
    bootId: { type: "string", columnType: "text", nullable: true },
    message: { type: "string", columnType: "text" },
  },
});
