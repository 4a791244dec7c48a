/**
 * Delivery of the operations outbox. Rows are written by a decision's transaction; sending
 * happens only after commit, so a crash never loses an operation a decision made, and a
 * re-send never makes a new one (ids are deterministic, Agents ignore ids they handled).
 *
 * A send that fails (no stream here, or its queue is full) leaves the row unacknowledged; the
 * Control holding the node's stream sends it (`delivery.ts`): when told by a notification,
 * when the node's stream is welcomed again, and every `resendAfterMs` while the node is
 * connected and has not reported. Only operations that still matter are re-sent, judged as a
 * first delivery (`worthResending`, {@link CampaignStore.unackedOperations}): an upgrade while
 * the node is offered/applying/restarting and enabled and its campaign offers (running, inside
 * a window, target not yanked), a rollback until reported on unless its release was yanked since (it
 * may still come back on the target), a confirm until acknowledged unless its release was
 * yanked since.
 */
import type { AgentGateway } from "../agents/events.js";
import type { CampaignStore, Outgoing } from "../campaign-store/index.js";
import type { Logger } from "../log.js";

/**
 * Sends between two turns of the event loop: about 40 ms of sending (36–39 µs a send,
 * measured in a 10,000-node rollout), so a large fan-out never blocks the loop for long. Each
 * turn lets in the reports and stream ends of the agents already offered, so turns after fewer
 * sends stretch the fan-out itself: after every 250, queuing 2,500 offers took 0.3–0.6 s of
 * wall time for 0.08–0.1 s of sending; after every 1,000, 0.13–0.18 s (docs/BENCHMARKS.md).
 */
const SEND_CHUNK = 1000;

/** What {@link sendAll} did. */
export interface SendResult {
  /** How many operations were queued on a stream here. */
  readonly queued: number;
  /** The nodes (each once) that have no stream here able to take their operation. */
  readonly unreachable: readonly string[];
}

/**
 * Sends each operation through the gateway, in order, yielding to the event loop after every
 * {@link SEND_CHUNK} sends, and stamps the ones queued on a stream (`last_sent_at`, `send_count`).
 */
export async function sendAll(
  store: Pick<CampaignStore, "markSent">,
  gateway: AgentGateway,
  outgoing: readonly Outgoing[],
  now: Date,
  log: Logger,
): Promise<SendResult> {
  const sent: string[] = [];
  const unreachable = new Set<string>();
  for (const [i, o] of outgoing.entries()) {
    if (i > 0 && i % SEND_CHUNK === 0) await new Promise<void>((r) => setImmediate(r));
    if (gateway.send(o.nodeId, o.operation)) sent.push(o.operation.id);
    else {
      unreachable.add(o.nodeId);
      log.debug({ nodeId: o.nodeId, operationId: o.operation.id }, "no stream here; send deferred");
    }
  }
  if (sent.length > 0) {
    // The stamp only times re-sends: losing it means an early re-send, never a lost operation.
    await store
      .markSent(sent, now)
      .catch((error: unknown) =>
        log.warn({ err: error, operations: sent.length }, "could not stamp sent operations"),
      );
  }
  return { queued: sent.length, unreachable: [...unreachable] };
}
