/**
 * The operator aborts while a busy node's offer is out (`simulation/deferral-aborts.ts`): the
 * seed that meets it, and what the campaign and its run make of it.
 */
import { describe, expect, it } from "vitest";
import { runSeed } from "../../simulation/run.js";

describe("deferralAborter", () => {
  it("seed 8: aborts a campaign while a busy node's offer is out; the campaign ends aborted and the run holds", async () => {
    const r = await runSeed(8, { faults: false, fullTrace: true });
    expect(r.violation).toBeUndefined();
    const said = r.trace.find((l) => l.includes("while busy node"));
    expect(said).toBeDefined();
    const id = /operator aborts (\S+) while busy node/.exec(said ?? "")?.[1] as string;
    expect(r.outcome.campaigns[id]).toMatchObject({ phase: "aborted" });
  }, 120_000);
});
