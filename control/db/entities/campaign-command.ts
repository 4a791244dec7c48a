/**
 * Administrator commands (pause, resume, abort) recorded durably by the admin API and
 * applied by the leader's worker through `decide`, in the transaction that marks them applied.
 */
import { EntitySchema } from "@mikro-orm/core";

/** A command row; `appliedAt` null while it waits for the leader. */
export interface CampaignCommandRecord {
  id: string;
  campaignId: string;
  kind: string;
  rollback: boolean;
  reason: string;
  actor: string;
  actorIp: string;
  createdAt: Date;
  appliedAt: Date | null;
  /** "applied", or "ignored: <why>". */
  outcome: string | null;
}

/** MikroORM schema of {@link CampaignCommandRecord} (table `campaign_commands`). */
export const CampaignCommandEntity = new EntitySchema<CampaignCommandRecord>({
  name: "CampaignCommandRecord",
  tableName: "campaign_commands",
  properties: {
    id: { type: "bigint", primary: true, autoincrement: true },
    campaignId: { type: "string", columnType: "text" },
    kind: { type: "string", columnType: "text" },
    rollback: { type: "boolean" },
    reason: { type: "string", columnType: "text" },
    actor: { type: "string", columnType: "text" },
    actorIp: { type: "string", columnType: "text" },
    createdAt: { type: "Date", columnType: "timestamptz" },
    appliedAt: { type: "Date", columnType: "timestamptz", nullable: true },
    outcome: { type: "string", columnType: "text", nullable: true },
  },
});
