/**
 * The node registry: one row per node that ever enrolled.
 *
 * Liveness (`online`, `lastSeen`) is owned by the agent hub in memory and flushed in
 * batches, so heartbeats never cost a row write each; these columns are therefore at most
 * one flush interval behind the hub.
 */
import { BigIntType, EntitySchema } from "@mikro-orm/core";

/** A node as stored. */
export interface NodeRecord {
  id: string;
  /** The effective labels: the agent-reported ones, overlaid with {@link assignedLabels}. */
  labels: Record<string, string>;
  /** Labels its join token or an administrator assigned; they win over reported ones. */
  assignedLabels: Record<string, string>;
  /** Waiting for an administrator's approval (`enrollment.requireApproval`): never offered. */
  pending: boolean;
  /** When an administrator revoked the node; null otherwise (cleared by enrolling again). */
  revokedAt: Date | null;
  pool: string;
  platform: string;
  agentVersion: string;
  previousVersion: string;
  bootId: string;
  capabilities: string[];
  confirmedSequence: number;
  firstSeen: Date | null;
  lastSeen: Date | null;
  online: boolean;
  enabled: boolean;
  disabledReason: string;
  /** Hex SHA-256 of the node token's secret part; null before enrollment completes. */
  tokenHash: string | null;
  tokenIssuedAt: Date | null;
  joinTokenId: string | null;
  /**
   * When an operator reset the node (its token revoked); until its next join-token
   * enrollment, which it lets through once and which clears it. Null otherwise.
   */
  resetAt: Date | null;
  /**
   * Since when the node's Agent reports its TUF metadata frozen (expired, no fresh metadata
   * fetched: it refuses new releases); null when it is not, or never said.
   */
  trustFrozenSince: Date | null;
  /** Why the Agent reports itself frozen; empty when it is not. */
  trustReason: string;
  /** The stream on record; a stale stream end never marks a reconnected node offline. */
  sessionId: string | null;
  /** The instance id of the Control holding the stream on record while online; else null. */
  heldBy: string | null;
  /** Bumped by every write that could race with another writer. */
  version: number;
  createdAt: Date;
  updatedAt: Date;
}

/** MikroORM schema of {@link NodeRecord} (table `nodes`). */
export const NodeEntity = new EntitySchema<NodeRecord>({
  name: "NodeRecord",
  tableName: "nodes",
  properties: {
    id: { type: "string", primary: true, columnType: "text" },
    labels: { type: "json" },
    assignedLabels: { type: "json" },
    pending: { type: "boolean" },
    revokedAt: { type: "Date", nullable: true, columnType: "timestamptz" },
    pool: { type: "string", columnType: "text" },
    platform: { type: "string", columnType: "text" },
    agentVersion: { type: "string", columnType: "text" },
    previousVersion: { type: "string", columnType: "text" },
    bootId: { type: "string", columnType: "text" },
    capabilities: { type: "json" },
    confirmedSequence: { type: new BigIntType("number") },
    firstSeen: { type: "Date", nullable: true, columnType: "timestamptz" },
    lastSeen: { type: "Date", nullable: true, columnType: "timestamptz" },
    online: { type: "boolean" },
    enabled: { type: "boolean" },
    disabledReason: { type: "string", columnType: "text" },
    tokenHash: { type: "string", nullable: true, columnType: "text" },
    tokenIssuedAt: { type: "Date", nullable: true, columnType: "timestamptz" },
    joinTokenId: { type: "string", nullable: true, columnType: "text" },
    resetAt: { type: "Date", nullable: true, columnType: "timestamptz" },
    trustFrozenSince: { type: "Date", nullable: true, columnType: "timestamptz" },
    trustReason: { type: "string", columnType: "text", default: "" },
    sessionId: { type: "string", nullable: true, columnType: "text" },
    heldBy: { type: "string", nullable: true, columnType: "text" },
    version: { type: "integer", version: true },
    createdAt: { type: "Date", columnType: "timestamptz" },
    updatedAt: { type: "Date", columnType: "timestamptz" },
  },
});
