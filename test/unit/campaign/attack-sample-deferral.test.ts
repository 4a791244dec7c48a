/**
 * The minimum sample (`--min-canaries`) against nodes that only deferred: a node skipped
 * `deferred` could have taken the upgrade, so it does not shrink the sample asked for (as an
 * offline or disabled one does not) and never counts as settled in it; a batch that loses its
 * sample to deferrals takes on_breach (min_canaries_unmet) rather than passing on too few.
 */
import { describe, expect, it } from "vitest";
import type { CampaignSpecInput } from "../../../control/campaign/index.js";
import type { Harness } from "./harness.js";
import { bringBack, fleet, MIN, NEW, nodeOf, report, start, tick } from "./harness.js";

const busy = { code: "deferred", message: "the update lock /run/lock held" };

const spec = (minCanaries: number): Partial<CampaignSpecInput> => ({
  batches: [{ percent: 100, minDurationMs: 0 }],
  failureThresholdPercent: 0,
  disruptionBudgetPercent: 100,
  configGraceMs: 0,
  maxDeferMs: 0,
  onBreach: "stop",
  minCanaries,
});

/** Three nodes offered at once: node-000 defers (skipped at once, max defer 0), the others succeed. */
function oneDefers(minCanaries: number): Harness {
  const h = start(fleet(3), spec(minCanaries));
  tick(h);
  expect(h.nodes.filter((n) => n.state === "offered")).toHaveLength(3);
  h.now += 1_000;
  report(h, "node-000", "DEFERRED", "upgrade", busy);
  tick(h);
  expect(nodeOf(h, "node-000")).toMatchObject({ state: "skipped", code: "deferred" });
  h.now += 1_000;
  for (const id of ["node-001", "node-002"]) report(h, id, "RESTARTING");
  bringBack(h, ["node-001", "node-002"], NEW);
  tick(h);
  tick(h);
  return h;
}

describe("the minimum sample and deferred nodes", () => {
  it("a node skipped deferred still counts toward the sample asked for: 2 settled of 3 asked breaches min_canaries_unmet", () => {
    const h = oneDefers(3);
    expect(h.campaign.batches[0]?.state).toBe("breached");
    expect(h.campaign).toMatchObject({ phase: "failed", code: "min_canaries_unmet" });
    expect(h.campaign.message).toContain("only 2 of the 3 nodes of batch 1");
    expect(h.campaign.finishedAt).toBeDefined();
  });

  it("with a sample of 2 the same batch passes on its two upgraded nodes, the deferred one not a failure", () => {
    const h = oneDefers(2);
    expect(h.campaign.phase).toBe("completed");
    expect(nodeOf(h, "node-001").state).toBe("succeeded");
    expect(nodeOf(h, "node-002").state).toBe("succeeded");
    expect(h.campaign.finishedAt).toBeDefined();
  });

  it("a node waiting on its deferral holds the pass: no batch passes while its sample may still grow", () => {
    const h = start(fleet(3), { ...spec(3), maxDeferMs: 10 * MIN });
    tick(h);
    h.now += 1_000;
    report(h, "node-000", "DEFERRED", "upgrade", busy);
    for (const id of ["node-001", "node-002"]) report(h, id, "RESTARTING");
    tick(h);
    bringBack(h, ["node-001", "node-002"], NEW);
    tick(h);
    expect(nodeOf(h, "node-000").state).toBe("waiting");
    expect(h.campaign.batches[0]?.state).toBe("running");
    expect(h.campaign.phase).toBe("running");
  });
});
