/**
 * One policy: a desired version carries the guard rails of the campaign that set it (its
 * maintenance windows, pool and download budgets, threshold and failure budget, gates), and every convergence campaign of it runs under them; convergence starts
 * none while every window is closed.
 */
import { describe, expect, it } from "vitest";
import {
  convergenceSpec,
  desiredOfCampaign,
  planConvergence,
  resolveSpec,
} from "../../../control/campaign/index.js";
import { fleetNode, T2 } from "./fleet-fixture.js";
import { windowsOf } from "./windows-of.js";

const SATURDAY_NIGHT = windowsOf("Sat 02:00-04:00 UTC");
/** Tuesday 2031-01-07 14:00 UTC, and Saturday 2031-01-11 02:30 UTC. */
const TUESDAY_AFTERNOON = Date.UTC(2031, 0, 7, 14, 0);
const SATURDAY_0230 = Date.UTC(2031, 0, 11, 2, 30);

const guarded = resolveSpec({
  targetVersion: "2.0.0",
  selector: { pools: ["prod"] },
  windows: SATURDAY_NIGHT,
  disruptionBudgetPercent: 10,
  maxDownloads: 4,
  failureThresholdPercent: 20,
  maxFailures: { kind: "count", count: 1 },
  minCanaries: 2,
  gates: [{ kind: "webhook", url: "https://gate.example/ok" }],
  gateGraceMs: 120_000,
  reconnectTimeoutMs: 300_000,
  configGraceMs: 30_000,
});

const recorded = desiredOfCampaign({
  campaignId: "c1",
  spec: guarded,
  target: T2,
  finishedAt: 1000,
});

describe("a desired version carries the guard rails of the campaign that set it", () => {
  it("its convergence campaign runs under the campaign's windows, budgets, threshold, failure budget and gates", () => {
    const spec = convergenceSpec(recorded, ["a", "b"], 0);
    expect(spec.windows).toEqual(SATURDAY_NIGHT);
    expect(spec.disruptionBudgetPercent).toBe(10);
    expect(spec.maxDownloads).toBe(4);
    expect(spec.failureThresholdPercent).toBe(20);
    // Not the minimum sample: one late node would be refused for want of two canaries.
    expect(spec.minCanaries).toBeUndefined();
    expect(spec.gates).toEqual([{ kind: "webhook", url: "https://gate.example/ok" }]);
    expect(spec.gateGraceMs).toBe(120_000);
    expect(spec.reconnectTimeoutMs).toBe(300_000);
    expect(spec.configGraceMs).toBe(30_000);
    // The stricter of the campaign's budget (1) and what is left of the burst limit (3 - 1).
    expect(spec.maxFailures).toEqual({ kind: "count", count: 1 });
  });

  it("a percentage failure budget is judged over the convergence campaign's own nodes, never looser than the burst limit", () => {
    const d = desiredOfCampaign({
      campaignId: "c1",
      spec: { ...guarded, maxFailures: { kind: "percent", percent: 50 } },
      target: T2,
      finishedAt: 1000,
    });
    // 50 % of 10 nodes is 5; what is left of the burst limit (3) is 2.
    const ids = Array.from({ length: 10 }, (_, i) => `n${i}`);
    expect(convergenceSpec(d, ids, 0).maxFailures).toEqual({ kind: "count", count: 2 });
    // 50 % of 2 nodes is 1.
    expect(convergenceSpec(d, ["a", "b"], 0).maxFailures).toEqual({ kind: "count", count: 1 });
  });

  it("a campaign without guard rails leaves its convergence campaigns without them", () => {
    const plain = desiredOfCampaign({
      campaignId: "c1",
      spec: resolveSpec({ targetVersion: "2.0.0", selector: { pools: ["prod"] } }),
      target: T2,
      finishedAt: 1000,
    });
    const spec = convergenceSpec(plain, ["a"], 0);
    expect(spec.windows).toBeUndefined();
    expect(spec.gates).toBeUndefined();
    expect(spec.maxDownloads).toBeUndefined();
    expect(spec.maxFailures).toEqual({ kind: "count", count: 2 });
  });

  it("a late node of the pool waits for the campaign's window: nothing starts on Tuesday afternoon, a campaign starts on Saturday night", () => {
    const fleet = [fleetNode("late")];
    expect(
      planConvergence({ desired: [recorded], fleet, runs: [], now: TUESDAY_AFTERNOON }),
    ).toEqual([]);
    expect(planConvergence({ desired: [recorded], fleet, runs: [], now: SATURDAY_0230 })).toEqual([
      {
        kind: "converge",
        desiredId: recorded.id,
        campaignId: `${recorded.id}-1`,
        nodeIds: ["late"],
      },
    ]);
  });

  it("a convergence campaign stopped by its threshold halts the desired version, saying a guard rail stopped it", () => {
    const run = {
      campaignId: `${recorded.id}-1`,
      desiredId: recorded.id,
      createdAt: 2000,
      finished: true,
      failedNodeIds: ["a"],
      phase: "failed" as const,
      code: "batch_failed" as const,
    };
    expect(
      planConvergence({
        desired: [recorded],
        fleet: [fleetNode("late")],
        runs: [run],
        now: SATURDAY_0230,
      }),
    ).toEqual([
      {
        kind: "halt",
        desiredId: recorded.id,
        failures: 1,
        failedNodeIds: ["a"],
        message: `convergence to 2.0.0 halted: its campaign ${recorded.id}-1 stopped on a guard rail of the campaign that set it (batch_failed); set the desired version again to resume`,
        abortCampaignIds: [],
      },
    ]);
  });
});
