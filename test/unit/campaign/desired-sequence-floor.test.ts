/**
 * Engine review R10: the desired version of a selector moves backwards. An administrator sets pool p's
 * desired version to 3.0.0 (sequence 3) while a campaign to 2.0.0 over pool p still runs (or
 * before a retry of an older 2.0.0 campaign completes); when that campaign completes, the
 * fleet pass records 2.0.0 as pool p's desired version, replacing 3.0.0, because
 * `replacesDesired` (desired.ts) compares only when each was set, never the targets'
 * sequences. Late nodes of pool p then converge to the older 2.0.0, and `desired list` shows
 * 2.0.0. The release channel never moves back (SPEC §3); an operator's newer desired version
 * should not be replaced by an older release that finished later.
 */
import { describe, expect, it } from "vitest";
import {
  desiredOfCampaign,
  replacesDesired,
  resolveSpec,
} from "../../../control/campaign/index.js";
import { desired, finished, world } from "../campaign-worker/fleet-world.js";

describe("a campaign's completion never lowers the sequence of a desired version", () => {
  it("does not replace the newer desired version", async () => {
    const w = world(["n1", "n2"]);
    const newer = desired({ target: { version: "3.0.0", sequence: 3 }, setBy: "alice" });
    w.fleetStore.tables.desired.set(newer.id, newer);
    const spec = resolveSpec({
      targetVersion: "2.0.0",
      selector: { pools: ["p"] },
      batches: [{ percent: 100, minDurationMs: 0 }],
    });
    await finished(w.store, "c-old", "bob", { n1: "succeeded", n2: "succeeded" }, spec);
    await w.runFor(1000);
    const now = w.fleetStore.tables.desired.get(newer.id);
    w.unlisten();
    expect(now?.target.version).toBe("3.0.0");
  });

  it("replaces a desired version set before it only with the same or a newer release", () => {
    const spec = resolveSpec({ targetVersion: "2.0.0", selector: { pools: ["p"] } });
    const next = desiredOfCampaign({
      campaignId: "c1",
      spec,
      target: { version: "2.0.0", sequence: 2 },
      finishedAt: 9000,
    });
    const stored = (version: string, sequence: number) => ({
      ...next,
      target: { version, sequence },
      setAt: 8000,
      setBy: "alice",
    });
    expect(replacesDesired(stored("3.0.0", 3), next)).toBe(false);
    expect(replacesDesired(stored("2.0.0", 2), next)).toBe(true);
    expect(replacesDesired(stored("1.0.0", 1), next)).toBe(true);
  });
});
