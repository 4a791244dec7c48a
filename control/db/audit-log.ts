/** Appends to and reads the audit log. Every administrative action writes one event. */
import type { EntityManager } from "@mikro-orm/postgresql";
import { AuditEventEntity, type AuditEventRecord } from "./entities/index.js";

/** Who acted: a token name or "control" for the engine, and the client address. */
export interface Actor {
  readonly name: string;
  readonly ip: string;
}

/** The engine itself, for decisions no person made. */
export const CONTROL_ACTOR: Actor = { name: "control", ip: "" };

/** An event to append. */
export interface AuditEntry {
  readonly actor: Actor;
  readonly action: string;
  readonly time: Date;
  readonly campaignId?: string;
  readonly nodeId?: string;
  readonly message: string;
  readonly detail?: Record<string, unknown>;
}

/**
 * Stages an audit event in `em`; it is written by the caller's flush, in the same
 * transaction as the change it records.
 */
export function stageAudit(em: EntityManager, entry: AuditEntry): AuditEventRecord {
  return em.create(AuditEventEntity, {
    time: entry.time,
    actor: entry.actor.name,
    actorIp: entry.actor.ip,
    action: entry.action,
    campaignId: entry.campaignId ?? null,
    nodeId: entry.nodeId ?? null,
    message: entry.message,
    detail: entry.detail ?? {},
  });
}
