/**
 * The operations outbox: one row per operation a campaign decided to send, written in the
 * decision's transaction and sent after commit; re-sent until the Agent reports on it. The
 * latest report is kept on the row, so decision facts survive a restart of Control.
 */
import { EntitySchema } from "@mikro-orm/core";

/** An outbox row; `id` is the operation id `campaignId/nodeId/kind`. */
export interface OperationRecord {
  id: string;
  campaignId: string;
  nodeId: string;
  kind: string;
  /** The encoded `agentcontrol.v1.Operation`; null when it could not be built. */
  payload: Buffer | null;
  createdAt: Date;
  lastSentAt: Date | null;
  sendCount: number;
  /** When the Agent first reported any phase for it. */
  ackedAt: Date | null;
  reportPhase: string | null;
  reportCode: string | null;
  reportMessage: string | null;
  reportVersion: string | null;
  reportAt: Date | null;
  /** Set when the operation can never be delivered (a send failure fact). */
  failedAt: Date | null;
  failure: string | null;
}

/** MikroORM schema of {@link OperationRecord} (table `campaign_operations`). */
export const OperationEntity = new EntitySchema<OperationRecord>({
  name: "OperationRecord",
  tableName: "campaign_operations",
  properties: {
    id: { type: "string", primary: true, columnType: "text" },
    campaignId: { type: "string", columnType: "text" },
    nodeId: { type: "string", columnType: "text" },
    kind: { type: "string", columnType: "text" },
    payload: { type: "Buffer", columnType: "bytea", nullable: true, lazy: true },
    createdAt: { type: "Date", columnType: "timestamptz" },
    lastSentAt: { type: "Date", columnType: "timestamptz", nullable: true },
    sendCount: { type: "integer" },
    ackedAt: { type: "Date", columnType: "timestamptz", nullable: true },
    reportPhase: { type: "string", columnType: "text", nullable: true },
    reportCode: { type: "string", columnType: "text", nullable: true },
    reportMessage: { type: "string", columnType: "text", nullable: true },
    reportVersion: { type: "string", columnType: "text", nullable: true },
    reportAt: { type: "Date", columnType: "timestamptz", nullable: true },
    failedAt: { type: "Date", columnType: "timestamptz", nullable: true },
    failure: { type: "string", columnType: "text", nullable: true },
  },
});
