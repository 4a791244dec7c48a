/**
 * Delivery: how the operations of the outbox reach the nodes connected to THIS Control. Every
 * Control runs one, whether it leads or not; the leader decides and commits operations, and
 * any Control may hold the stream of the node they are for.
 *
 * - After a decision commits, the leader {@link Delivery.deliver}s its operations: straight
 *   onto the streams it holds, and for every other node a notification on
 *   {@link OUTBOX_CHANNEL} naming it.
 * - A notification naming a node connected here ({@link Delivery.noteNotified}), a node's
 *   stream welcomed here ({@link Delivery.noteConnected}): its unacknowledged operations are
 *   read and sent at the next {@link Delivery.step}.
 * - Every `periodMs` the operations of the nodes connected here that were never sent or were
 *   last sent more than `resendAfterMs` ago are read and sent: a node that did not report is
 *   sent its operation again, and a notification this Control missed costs at most a period.
 * - {@link Delivery.gap} (the notification listener was re-established, so notifications were
 *   lost) makes the next step do that periodic read at once.
 *
 * The outbox stays the truth: a notification only says where to look, a send only queues on a
 * stream, and an operation is done with once its Agent reports on it (Agents ignore an id they
 * already handled and report on it again). Time comes only from the injected Clock.
 */
import type { CampaignStore, Outgoing, ResendFilter } from "../campaign-store/index.js";
import type { Clock } from "../clock.js";
import type { Logger } from "../log.js";
import { OUTBOX_CHANNEL } from "../shared/notify-channels.js";
import type { WorkerGateway } from "./facts.js";
import { sendAll } from "./outbox.js";

/** How soon a failed read of unacknowledged operations is tried again. */
const RETRY_MS = 1000;

/** Options of {@link Delivery}. */
export interface DeliveryOptions {
  readonly store: Pick<CampaignStore, "unackedOperations" | "markSent" | "notify">;
  readonly gateway: WorkerGateway;
  readonly clock: Clock;
  readonly log: Logger;
  /** An unacknowledged operation is sent again this long after its last send. */
  readonly resendAfterMs: number;
  /** How often the nodes connected here are looked at for operations to (re-)send. */
  readonly periodMs: number;
  /**
   * Runs the send stamps between report flushes, never alongside one (both update outbox
   * rows; see `EventIntake.exclusive`). Default: at once.
   */
  readonly exclusive?: <T>(work: () => Promise<T>) => Promise<T>;
  /** Called when something became due at once (the owner's loop should step soon). */
  readonly wake?: () => void;
}

/** The delivery of one Control; see the file's TSDoc. */
export class Delivery {
  private readonly connected = new Set<string>();
  private readonly notified = new Set<string>();
  /** Nodes whose read failed: read again with the next periodic pass. */
  private readonly retry = new Set<string>();
  private nextPass = 0;
  private readonly stamps: Pick<CampaignStore, "markSent">;

  constructor(private readonly o: DeliveryOptions) {
    const exclusive = o.exclusive ?? ((work) => work());
    this.stamps = { markSent: (ids, at) => exclusive(() => o.store.markSent(ids, at)) };
  }

  /** True when a step has work at once (a node connected or was named by a notification). */
  get pending(): boolean {
    return this.connected.size > 0 || this.notified.size > 0;
  }

  /** When the periodic pass is due next (epoch ms). */
  get nextDue(): number {
    return this.nextPass;
  }

  /** A node's stream was welcomed here: its unacknowledged operations go at the next step. */
  noteConnected(nodeId: string): void {
    this.connected.add(nodeId);
    this.o.wake?.();
  }

  /** An outbox notification named these nodes; those connected here are sent theirs. */
  noteNotified(nodeIds: readonly string[]): void {
    let any = false;
    for (const nodeId of nodeIds) {
      if (this.o.gateway.connected(nodeId) === undefined) continue;
      this.notified.add(nodeId);
      any = true;
    }
    if (any) this.o.wake?.();
  }

  /** Notifications may have been lost: the next step makes the periodic pass at once. */
  gap(): void {
    this.nextPass = 0;
    this.o.wake?.();
  }

  /**
   * Sends operations a decision just committed: those of nodes connected here on their
   * streams, and a notification naming every other node, so the Control holding it sends
   * them. Never rejects (a lost notification is made up for by the holder's periodic pass).
   */
  async deliver(outgoing: readonly Outgoing[]): Promise<void> {
    if (outgoing.length === 0) return;
    const { unreachable } = await this.send(outgoing);
    if (unreachable.length === 0) return;
    await this.o.store
      .notify(OUTBOX_CHANNEL, unreachable)
      .catch((error: unknown) =>
        this.o.log.warn(
          { err: (error as Error).message, nodes: unreachable.length },
          "could not announce operations; their holders find them on their next pass",
        ),
      );
  }

  /** Sends what is due at the clock's now. Never rejects. */
  async step(): Promise<void> {
    const now = this.o.clock.now().getTime();
    const named = [...this.connected, ...this.notified].filter(
      (nodeId) => this.o.gateway.connected(nodeId) !== undefined,
    );
    this.connected.clear();
    this.notified.clear();
    if (named.length > 0) await this.resend({ nodeIds: [...new Set(named)] }, named, now);
    if (now >= this.nextPass) {
      this.nextPass = now + this.o.periodMs;
      const again = [...this.retry].filter((id) => this.o.gateway.connected(id) !== undefined);
      this.retry.clear();
      if (again.length > 0) await this.resend({ nodeIds: again }, again, now);
      const local = this.o.gateway.nodeIds?.();
      const nodeIds = local === undefined ? undefined : [...local];
      if (nodeIds === undefined || nodeIds.length > 0) {
        const sentBefore = new Date(now - this.o.resendAfterMs);
        await this.resend(
          nodeIds === undefined ? { sentBefore } : { nodeIds, sentBefore },
          undefined,
          now,
        );
      }
    }
  }

  /** Reads the unacknowledged operations `filter` selects and sends those of nodes here. */
  private async resend(
    filter: Omit<ResendFilter, "now">,
    retryOnFailure: readonly string[] | undefined,
    now: number,
  ): Promise<void> {
    let outgoing: Outgoing[];
    try {
      outgoing = await this.o.store.unackedOperations({ ...filter, now: new Date(now) });
    } catch (error) {
      this.o.log.warn(
        { err: (error as Error).message },
        "could not read unacknowledged operations; trying again",
      );
      for (const nodeId of retryOnFailure ?? []) this.retry.add(nodeId);
      this.nextPass = Math.min(this.nextPass, now + RETRY_MS);
      return;
    }
    const here = outgoing.filter((o) => this.o.gateway.connected(o.nodeId) !== undefined);
    if (here.length > 0) await this.send(here);
  }

  private send(outgoing: readonly Outgoing[]) {
    return sendAll(this.stamps, this.o.gateway, outgoing, this.o.clock.now(), this.o.log);
  }
}
