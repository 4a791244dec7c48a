/**
 * What the worker does with what Controls announce through the store's notifications: an
 * operation for a node connected here goes to the Delivery; as leader, a registry row or a
 * fact another Control wrote marks its node stale and its campaign due, and a campaign started
 * or commanded elsewhere is decided at once; a node cut off (revoked, reset) anywhere has its
 * stream here closed, whether this Control leads or not. When notifications were lost (a gap), everything
 * they could have said is read again.
 */
import type { NotificationListener } from "../campaign-store/index.js";
import {
  CAMPAIGNS_CHANNEL,
  CUTOFF_CHANNEL,
  FACTS_CHANNEL,
  NODES_CHANNEL,
  OUTBOX_CHANNEL,
} from "../shared/notify-channels.js";
import type { Delivery } from "./delivery.js";
import type { DueQueue } from "./due-queue.js";
import type { WorkingCopies } from "./working-copy.js";

/** What a notification may touch. */
export interface NotificationTargets {
  readonly leading: () => boolean;
  /** The live campaign a node belongs to, among those this worker decides. */
  readonly campaignOfNode: (nodeId: string) => string | undefined;
  /** True for the campaigns this worker decides. */
  readonly tracks: (campaignId: string) => boolean;
  readonly copies: WorkingCopies;
  readonly due: DueQueue;
  readonly delivery: Delivery;
  /** Wakes the worker's loop. */
  readonly wake: () => void;
  /** Closes the stream of a node this Control holds, cut off by an administrator. */
  readonly cutOff?: (nodeId: string) => void;
}

/** The worker's listener of the control channels; see the file's TSDoc. */
export function notificationListener(t: NotificationTargets): NotificationListener {
  return {
    onNotify(channel, lines) {
      switch (channel) {
        case OUTBOX_CHANNEL:
          t.delivery.noteNotified(lines);
          return;
        case NODES_CHANNEL: {
          if (!t.leading()) return;
          let any = false;
          for (const nodeId of lines) {
            const campaignId = t.campaignOfNode(nodeId);
            if (campaignId === undefined) continue;
            t.copies.markRegistryStale(nodeId);
            t.due.markDue(campaignId);
            any = true;
          }
          if (any) t.wake();
          return;
        }
        case FACTS_CHANNEL: {
          if (!t.leading()) return;
          let any = false;
          for (const line of lines) {
            const slash = line.indexOf("/");
            const campaignId = line.slice(0, slash);
            if (slash < 0 || !t.tracks(campaignId)) continue;
            t.copies.markStale(campaignId, line.slice(slash + 1));
            t.due.markDue(campaignId);
            any = true;
          }
          if (any) t.wake();
          return;
        }
        case CUTOFF_CHANNEL:
          for (const nodeId of lines) t.cutOff?.(nodeId);
          return;
        case CAMPAIGNS_CHANNEL: {
          if (!t.leading()) return;
          for (const campaignId of lines) t.due.markDue(campaignId);
          if (lines.length > 0) t.wake();
          return;
        }
        default:
          return;
      }
    },
    onGap() {
      t.delivery.gap();
      if (t.leading()) {
        t.copies.clear();
        t.due.markAllDue();
        t.wake();
      }
    },
  };
}
