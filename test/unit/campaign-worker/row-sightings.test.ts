/**
 * Offline is judged on the leader's clock: a registry row's `last_seen` is stamped by the
 * Control that held the node's stream, so the leader counts a node's silence from when it first
 * saw the row say that (docs/decisions.md, "One clock for ordering across Controls").
 */
import { describe, expect, it } from "vitest";
import { isOffline, type Liveness } from "../../../control/campaign-worker/facts.js";
import { RowSightings } from "../../../control/campaign-worker/row-sightings.js";

const OFFLINE_AFTER = 60_000;

function liveness(now: number, sightings: RowSightings): Liveness {
  return {
    now,
    readyAt: 0,
    offlineAfterMs: OFFLINE_AFTER,
    lastHeardMs: () => undefined,
    rowSeenMs: (nodeId, lastSeen, at) => sightings.seenMs(nodeId, lastSeen, at),
  };
}

describe("a node whose stream ended on a Control 5 s behind the leader", () => {
  it("is offline offlineAfter after the leader saw its row change, not 5 s before", () => {
    const rows = new RowSightings();
    // The leader saw the row while the node was online (its last heartbeat write).
    expect(isOffline(liveness(50_000, rows), "n1", new Date(45_000))).toBe(false);
    // The stream ends at 100 s on the leader's clock; the holder, 5 s behind, writes 95 s. The
    // leader reads the row at 100 s.
    expect(isOffline(liveness(100_000, rows), "n1", new Date(95_000))).toBe(false);
    expect(isOffline(liveness(155_000, rows), "n1", new Date(95_000))).toBe(false);
    expect(isOffline(liveness(159_999, rows), "n1", new Date(95_000))).toBe(false);
    expect(isOffline(liveness(160_000, rows), "n1", new Date(95_000))).toBe(true);
  });

  it("counts from the row's own time a row it never saw change (the fallback at first sight)", () => {
    const rows = new RowSightings();
    expect(isOffline(liveness(100_000, rows), "n1", new Date(30_000))).toBe(true);
    expect(isOffline(liveness(100_000, rows), "n2", new Date(50_000))).toBe(false);
  });

  it("forgets what it saw when told (a change of leader)", () => {
    const rows = new RowSightings();
    rows.seenMs("n1", 1000, 2000);
    expect(rows.seenMs("n1", 5000, 9000)).toBe(9000);
    rows.clear();
    expect(rows.seenMs("n1", 5000, 20_000)).toBe(5000);
  });
});
