/** The audit log: one row per administrative or campaign action, with its actor. */
import { EntitySchema } from "@mikro-orm/core";

/** An audit event as stored. */
export interface AuditEventRecord {
  id: string;
  time: Date;
  actor: string;
  actorIp: string;
  action: string;
  campaignId: string | null;
  nodeId: string | null;
  message: string;
  detail: Record<string, unknown>;
}

/** MikroORM schema of {@link AuditEventRecord} (table `audit_events`, id a bigserial). */
export const AuditEventEntity = new EntitySchema<AuditEventRecord>({
  name: "AuditEventRecord",
  tableName: "audit_events",
  properties: {
    id: { type: "bigint", primary: true, autoincrement: true },
    time: { type: "Date", columnType: "timestamptz" },
    actor: { type: "string", columnType: "text" },
    actorIp: { type: "string", columnType: "text" },
    action: { type: "string", columnType: "text" },
    campaignId: { type: "string", nullable: true, columnType: "text" },
    nodeId: { type: "string", nullable: true, columnType: "text" },
    message: { type: "string", columnType: "text" },
    detail: { type: "json" },
  },
});
