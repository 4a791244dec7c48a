/**
 * Delivery of the operations outbox. Rows are written by a decision's transaction; sending
 * happens only after commit, so a crash never loses an operation a decision made, and a
 * re-send never makes a new one (ids are deterministic, Agents ignore ids they handled).
 *
 * A send that fails (no stream here, or its queue is full) leaves the row unacknowledged; it
 * is re-sent when the node's stream is welcomed again, and every `resendAfterMs` while the
 * node is connected and has not reported. Only operations that still matter are re-sent:
 * an upgrade while the node is offered/applying/restarting, a rollback while it is rolling
 * back, a confirm until acknowledged.
 */
import type { AgentGateway } from "../agents/events.js";
import type { EncodedOperation } from "../agents/operation-frame.js";
import type { Logger } from "../log.js";
import type { Queryable } from "./store.js";

/** An operation to send now. */
export interface Outgoing {
  readonly nodeId: string;
  /** The operation as the outbox stores it. */
  readonly operation: EncodedOperation;
}

/** Sends between two yields to the event loop, so a large fan-out never blocks it for long. */
const SEND_CHUNK = 250;

/**
 * Sends each operation through the gateway, in order, yielding to the event loop after every
 * {@link SEND_CHUNK} sends, and stamps the ones queued on a stream (`last_sent_at`, `send_count`).
 * @returns how many were queued.
 */
export async function sendAll(
  db: Queryable,
  gateway: AgentGateway,
  outgoing: readonly Outgoing[],
  now: Date,
  log: Logger,
): Promise<number> {
  const sent: string[] = [];
  for (const [i, o] of outgoing.entries()) {
    if (i > 0 && i % SEND_CHUNK === 0) await new Promise<void>((r) => setImmediate(r));
    if (gateway.send(o.nodeId, o.operation)) sent.push(o.operation.id);
    else
      log.debug(
        { nodeId: o.nodeId, operationId: o.operation.id },
        "node not reachable; send deferred",
      );
  }
  if (sent.length > 0) {
    // The stamp only times re-sends: losing it means an early re-send, never a lost operation.
    await db
      .query(
        `update campaign_operations set last_sent_at = $2, send_count = send_count + 1
          where id = any($1::text[])`,
        [sent, now],
      )
      .catch((error: unknown) =>
        log.warn({ err: error, operations: sent.length }, "could not stamp sent operations"),
      );
  }
  return sent.length;
}

/** Which unacknowledged operations to re-send. */
export interface ResendFilter {
  /** Only these nodes (typically: just reconnected). */
  readonly nodeIds?: readonly string[];
  /** Only rows never sent or last sent before this time. */
  readonly sentBefore?: Date;
}

/** The unacknowledged operations worth re-sending, oldest first per node. */
export async function unackedOperations(db: Queryable, filter: ResendFilter): Promise<Outgoing[]> {
  const params: unknown[] = [];
  const where: string[] = [];
  if (filter.nodeIds !== undefined) {
    if (filter.nodeIds.length === 0) return [];
    params.push(filter.nodeIds);
    where.push(`o.node_id = any($${params.length}::text[])`);
  }
  if (filter.sentBefore !== undefined) {
    params.push(filter.sentBefore);
    where.push(`(o.last_sent_at is null or o.last_sent_at < $${params.length})`);
  }
  const result = await db.query<{ id: string; node_id: string; payload: Buffer }>(
    `select o.id, o.node_id, o.payload from campaign_operations o
       join campaign_nodes cn on cn.campaign_id = o.campaign_id and cn.node_id = o.node_id
      where o.acked_at is null and o.failed_at is null and o.payload is not null
        and (o.kind = 'confirm'
             or (o.kind = 'upgrade' and cn.state in ('offered', 'applying', 'restarting'))
             or (o.kind = 'rollback' and cn.state = 'rolling_back'))
        ${where.map((w) => `and ${w}`).join(" ")}
      order by o.created_at, o.id`,
    params,
  );
  return result.rows.map((r) => ({
    nodeId: r.node_id,
    operation: { id: r.id, bytes: new Uint8Array(r.payload) },
  }));
}
