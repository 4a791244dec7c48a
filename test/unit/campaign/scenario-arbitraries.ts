/**
 * The random campaigns the engine's property tests run: fleets of nodes with random behaviours,
 * pools and timings, random campaign settings and random admin commands (see `sim.ts`).
 */
import fc from "fast-check";
import type { AdminCommand, CampaignSpecInput, OnBreach } from "../../../control/campaign/index.js";
import { MIN } from "./harness.js";
import type { Behaviour, RollbackBehaviour, Scenario, SimNode } from "./sim.js";

const behaviours: Behaviour[] = [
  "succeed",
  "refuse",
  "fail",
  "never_return",
  "revert",
  "config_fail",
  "lost_after_upgrade",
  "fail_then_target",
  "lose_heartbeat",
  "offline",
  "late_online",
  "reconnecting",
  "disabled",
  "disable_later",
  "no_cap",
  "current",
  "send_fail",
];

const nodeArb: fc.Arbitrary<SimNode> = fc.record({
  behaviour: fc.oneof(
    { weight: 12, arbitrary: fc.constant<Behaviour>("succeed") },
    { weight: 6, arbitrary: fc.constantFrom(...behaviours) },
  ),
  rollback: fc.constantFrom<RollbackBehaviour>(
    "reinstate",
    "reinstate",
    "reinstate",
    "fail",
    "silent",
  ),
  pool: fc.constantFrom("", "a", "b"),
  canary: fc.integer({ min: 0, max: 9 }).map((i) => i === 0),
  stepMs: fc.integer({ min: 100, max: 60_000 }),
  restartMs: fc.integer({ min: 1_000, max: 15 * MIN }),
  configGraceCapable: fc.boolean(),
});

const batchSets = [[5, 25, 100], [10, 100], [100], [1, 2, 50, 100], [20, 40, 60, 80, 100]];

const specArb: fc.Arbitrary<Partial<CampaignSpecInput>> = fc.record({
  batches: fc
    .tuple(fc.constantFrom(...batchSets), fc.integer({ min: 0, max: 30 * MIN }))
    .map(([ps, d]) => ps.map((percent) => ({ percent, minDurationMs: d }))),
  failureThresholdPercent: fc.integer({ min: 0, max: 60 }),
  concurrency: fc.integer({ min: 0, max: 5 }),
  onBreach: fc.constantFrom<OnBreach>("rollback", "pause", "stop"),
  reconnectTimeoutMs: fc.integer({ min: MIN, max: 15 * MIN }),
  configGraceMs: fc.integer({ min: 0, max: 3 * MIN }),
  soakMs: fc.integer({ min: 0, max: 10 * MIN }),
  disruptionBudgetPercent: fc.integer({ min: 1, max: 100 }),
});

const commandArb: fc.Arbitrary<{ at: number; command: AdminCommand }> = fc.record({
  at: fc.integer({ min: 0, max: 120 * MIN }),
  command: fc.oneof(
    { weight: 3, arbitrary: fc.constant<AdminCommand>({ kind: "pause" }) },
    { weight: 3, arbitrary: fc.constant<AdminCommand>({ kind: "resume" }) },
    {
      weight: 1,
      arbitrary: fc.boolean().map<AdminCommand>((rollback) => ({ kind: "abort", rollback })),
    },
  ),
});

/** A fleet of 1 to 40 nodes, campaign settings and up to four admin commands. */
export const scenarioArb: fc.Arbitrary<Scenario> = fc.record({
  nodes: fc.array(nodeArb, { minLength: 1, maxLength: 40 }),
  spec: specArb,
  commands: fc.array(commandArb, { maxLength: 4 }),
});

/** How many scenarios each property runs (`CAMPAIGN_PROPERTY_RUNS`, 150 by default). */
export const PROPERTY_RUNS = Number(process.env.CAMPAIGN_PROPERTY_RUNS ?? 150);

/** Scenarios where about a third of the nodes have `behaviour`. */
export function scenariosWith(behaviour: Behaviour): fc.Arbitrary<Scenario> {
  return scenarioArb.chain((s) =>
    fc
      .array(fc.integer({ min: 0, max: 2 }), {
        minLength: s.nodes.length,
        maxLength: s.nodes.length,
      })
      .map((picks) => ({
        ...s,
        nodes: s.nodes.map((n, i) => (picks[i] === 0 ? { ...n, behaviour } : n)),
      })),
  );
}
