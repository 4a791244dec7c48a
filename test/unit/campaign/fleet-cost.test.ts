/**
 * The cost of a retry's plan and of a convergence pass's pure steps in the size of the fleet,
 * counted (`scan-count.ts`: elements visited by Array scans and sort comparisons), never
 * timed: from 4,000 to 16,000 nodes the count may grow as n log n, not as n². A canary breach
 * cancels every other node, so its retry lists every node id; a selection that scanned that
 * list for each candidate counted 16× more at four times the fleet.
 */
import { describe, expect, it } from "vitest";
import {
  type AdmissionCandidate,
  admit,
  convergenceSpec,
  createCampaign,
  DEFAULT_POLICY,
  type DesiredVersion,
  desiredIdOf,
  type FleetNode,
  planCampaign,
  planConvergence,
  planRetry,
  resolveSpec,
  summarizeFleet,
} from "../../../control/campaign/index.js";
import { countScans } from "./scan-count.js";

const RULES = { policy: DEFAULT_POLICY, maxVersion: undefined };
const RELEASE = { version: "2.0.0", sequence: 2, expiresAt: undefined, platforms: undefined };

function candidates(n: number): AdmissionCandidate[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `node-${String(i).padStart(6, "0")}`,
    labels: {},
    pool: "prod",
    enabled: true,
    everConnected: true,
    capabilities: ["upgrade.v1"],
    agentVersion: "1.0.0",
    confirmedSequence: 1,
  }));
}

/** Plans and admits the retry of a campaign over `n` nodes whose canary failed. */
function retryAfterCanaryBreach(n: number): number {
  const fleet = candidates(n);
  const spec = resolveSpec({ targetVersion: "2.0.0", selector: { pools: ["prod"] } });
  const plan = planCampaign(spec, fleet);
  const c = createCampaign({ id: "c1", spec, plan, target: RELEASE, now: 0 });
  const nodes = c.nodes.map((node, i) => ({
    ...node,
    state: i === 0 ? ("failed" as const) : ("canceled" as const),
  }));
  const campaign = { ...c.campaign, phase: "rolled_back" as const };
  return countScans(() => {
    const retry = planRetry(campaign, nodes, ["node-000001"]);
    if (!retry.ok) throw new Error(retry.message);
    const admitted = admit({
      intent: "start",
      origin: "operator",
      spec: retry.spec,
      rules: RULES,
      release: RELEASE,
      candidates: fleet,
      busy: new Map(),
      now: 0,
      orderSecret: "secret",
    });
    if (!admitted.ok) throw new Error(admitted.refusal.kind);
    expect(admitted.plan.totalNodes).toBe(n - 1);
  }).visits;
}

/**
 * One convergence pass's pure steps over `n` nodes behind a desired version of pool prod and
 * one over an explicit list of every node id (as a desired version set over node ids holds):
 * the plan, the spec of the campaign it starts, its admission, and the fleet summary.
 */
function convergencePassOver(n: number): number {
  const fleet: FleetNode[] = candidates(n).map((c) => ({
    ...c,
    online: true,
    runningSequence: 1,
    busy: false,
  }));
  const exclude = { nodeIds: [], tags: {} };
  const bySelector = (selector: DesiredVersion["selector"], setAt: number): DesiredVersion => ({
    id: desiredIdOf(selector, exclude),
    selector,
    exclude,
    target: { version: "2.0.0", sequence: 2 },
    setAt,
    setBy: "alice",
    settings: {
      reconnectTimeoutMs: 60_000,
      configGraceMs: 0,
      disruptionBudgetPercent: 5,
      maxFailures: 3,
    },
    haltedAt: undefined,
    haltedReason: undefined,
  });
  const pool = bySelector({ labels: {}, pools: ["prod"], nodeIds: [] }, 1000);
  const listed = bySelector(
    { labels: {}, pools: [], nodeIds: fleet.filter((_, i) => i % 2 === 0).map((f) => f.id) },
    2000,
  );
  return countScans(() => {
    const steps = planConvergence({ desired: [pool, listed], fleet, runs: [], now: 5000 });
    expect(steps).toHaveLength(2);
    for (const step of steps) {
      if (step.kind !== "converge") throw new Error(step.kind);
      const d = step.desiredId === pool.id ? pool : listed;
      const admitted = admit({
        intent: "start",
        origin: "system",
        spec: convergenceSpec(d, step.nodeIds, 0),
        rules: RULES,
        release: RELEASE,
        candidates: fleet,
        busy: new Map(),
        now: 0,
        orderSecret: "secret",
      });
      if (!admitted.ok) throw new Error(admitted.refusal.kind);
    }
    summarizeFleet({ fleet, desired: [pool, listed], runs: [] });
  }).visits;
}

/** The growth allowed from 4,000 to 16,000 nodes: 4× for linear work, with n log n's share. */
const ALLOWED = 4 * (Math.log2(16_000) / Math.log2(4_000)) * 1.1;

describe("the cost of retries and convergence in the size of the fleet (counted, not timed)", () => {
  it("a retry of a canary breach over 16,000 nodes costs at most n log n times what 4,000 do", () => {
    const small = retryAfterCanaryBreach(4_000);
    const large = retryAfterCanaryBreach(16_000);
    expect(large / small).toBeLessThan(ALLOWED);
  }, 60_000);

  it("a convergence pass over 16,000 nodes costs at most n log n times what 4,000 do", () => {
    const small = convergencePassOver(4_000);
    const large = convergencePassOver(16_000);
    expect(large / small).toBeLessThan(ALLOWED);
  }, 60_000);
});
