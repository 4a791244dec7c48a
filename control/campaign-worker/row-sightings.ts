/**
 * When the leader first saw each node's registry row say its `last_seen`: a row's `last_seen`
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
