import type { ConfigFailureRow } from "../campaign-store/index.js";

/**
 * What the leader saw and when, on its own clock, of facts another Control stamped.
 *
 * {@link RowSightings}: when the leader first saw each node's registry row say its `last_seen`: a row's `last_seen`
 * is stamped by the Control that held the node's stream, on that Control's clock, so the leader
 * counts a node's silence from the moment it saw the row change, on its own clock
 * (docs/decisions.md, "One clock for ordering across Controls"). A row it never saw change (the
 * first sight of a node, after a takeover or when a campaign first reads it) falls back on the
 * row's own time; after a takeover `readyAt` bounds that anyway.
 */

/** The leader's sightings of registry rows' `last_seen`, per node. */
export class RowSightings {
  private readonly seen = new Map<string, { readonly value: number; readonly at: number }>();

  /**
   * The leader's time (epoch ms) from which a node whose row says `lastSeen` has been silent:
   * `now` when this is the first time it sees the row say `lastSeen` after seeing it say
   * something else; the time it first saw it, when seen before; `lastSeen` itself at first sight.
   */
  seenMs(nodeId: string, lastSeen: number, now: number): number {
    const known = this.seen.get(nodeId);
    if (known?.value === lastSeen) return known.at;
    const at = known === undefined ? lastSeen : now;
    this.seen.set(nodeId, { value: lastSeen, at });
    return at;
  }

  /** Forgets every sighting (leadership changed hands). */
  clear(): void {
    this.seen.clear();
  }
}

/**
 * When the leader first loaded each config failure of a campaign: a failure is stamped by the
 * Control holding the node's stream, and the engine compares its time with the leader's offer,
 * so the time it counts from is the leader's, from the load that first brought it. The failures
 * found at the first load of a campaign since this process leads keep their own stamps (they
 * were there before the leader looked); a failure that appears in a later read (a refresh, or a
 * reload of the copy) counts from that read. Cleared when leadership changes hands.
 */
export class FailureSightings {
  private readonly campaigns = new Map<string, Map<string, number>>();

  /**
   * For one read of campaign `campaignId`'s failures at `now`: the time each row counts from
   * (its own stamp when this is the campaign's first read since this process leads).
   */
  seenMs(campaignId: string, now: number): (row: ConfigFailureRow) => number {
    let seen = this.campaigns.get(campaignId);
    const firstLook = seen === undefined;
    if (seen === undefined) {
      seen = new Map();
      this.campaigns.set(campaignId, seen);
    }
    const known = seen;
    return (row) => {
      const key = JSON.stringify([row.node_id, row.at.getTime(), row.boot_id, row.message]);
      let at = known.get(key);
      if (at === undefined) {
        at = firstLook ? row.at.getTime() : now;
        known.set(key, at);
      }
      return at;
    };
  }

  /** Forgets a finished campaign's failures. */
  forget(campaignId: string): void {
    this.campaigns.delete(campaignId);
  }

  /** Forgets every sighting (leadership changed hands). */
  clear(): void {
    this.campaigns.clear();
  }
}
