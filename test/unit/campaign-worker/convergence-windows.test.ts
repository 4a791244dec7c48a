/**
 * One policy, in the leader's fleet passes on the memory stores: a campaign over pool p with a
 * Saturday 02:00-04:00 window completes; a late node of p that appears on Tuesday afternoon is
 * not offered until the window opens.
 */
import { describe, expect, it } from "vitest";
import { resolveSpec } from "../../../control/campaign/index.js";
import { windowsOf } from "../campaign/windows-of.js";
import { finished, INTERVAL, world } from "./fleet-world.js";

/** Tuesday 2031-01-07 14:00 UTC, and the Saturday after at 02:00 UTC. */
const TUESDAY_AFTERNOON = Date.UTC(2031, 0, 7, 14, 0);
const SATURDAY_0200 = Date.UTC(2031, 0, 11, 2, 0);

/** The nodes sent an upgrade (a re-send counted once). */
const upgrades = (sent: readonly { nodeId: string; id: string }[]) => [
  ...new Set(sent.filter((s) => s.id.endsWith("/upgrade")).map((s) => s.nodeId)),
];

describe("convergence runs under the windows of the campaign that set the desired version", () => {
  it("a late node of the pool appearing on Tuesday afternoon is offered only in the Saturday window", async () => {
    const w = world(["n1", "late"], {}, TUESDAY_AFTERNOON);
    const spec = resolveSpec({
      targetVersion: "2.0.0",
      selector: { pools: ["p"] },
      batches: [{ percent: 100, minDurationMs: 0 }],
      windows: windowsOf("Sat 02:00-04:00 UTC"),
    });
    await finished(w.store, "c1", "alice", { n1: "succeeded" }, spec);
    w.gateway.connect("late");
    await w.runFor(3 * INTERVAL);
    const [d] = [...w.fleetStore.tables.desired.values()];
    expect(d?.setBy).toBe("campaign:c1");
    expect(upgrades(w.gateway.sent)).toEqual([]);
    w.clock.advanceTo(SATURDAY_0200);
    await w.runFor(2 * INTERVAL);
    expect(upgrades(w.gateway.sent)).toEqual(["late"]);
    w.unlisten();
  });
});
