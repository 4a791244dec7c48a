/**
 * The invariants the simulation checks after every step, over the whole store and the fleet:
 * the per-campaign ones over stored records (`record-invariants.ts`: I1, I2, I3, I6, W1, W2,
 * R1, G1) and the fleet-wide ones only a world can see, each judged by a reference model
 * (`reference/`), never by the engine's functions:
 *
 * - I4: an upgrade goes only to a node of the campaign's current batch, that negotiated
 *   `upgrade.v1`, is enabled, and was selected when the campaign started.
 * - I5: when a decision offers, the nodes in flight in each pool across every live campaign
 *   stay within the pool's budget.
 * - I7: operation ids are unique per node, kind and campaign, and no agent applies one twice.
 * - I8: no agent's confirmed sequence ever goes back.
 * - C1: an agent's confirmed floor is the sequence of a release it ran and was confirmed on
 *   (`confirm-invariants.ts`).
 */
import type { CampaignNode, CampaignState } from "../control/campaign/index.js";
import type { MemoryCampaignStore } from "../control/campaign-store/index.js";
import type { SimFleet } from "./agents.js";
import { confirmFloorViolations } from "./confirm-invariants.js";
import { recordViolations, transitionViolations } from "./record-invariants.js";
import { refInFlight, refPoolLimit } from "./reference/pools.js";

/** What the checks remember between steps. */
export interface CheckState {
  readonly before: Map<string, { campaign: CampaignState; nodes: CampaignNode[]; version: number }>;
  readonly seenOperations: Set<string>;
  /** Members of each campaign when it started. */
  readonly members: Map<string, Set<string>>;
  /** Nodes disabled so far, with when. */
  readonly disabledAt: Map<string, number>;
  /** Each agent's confirmed floor as C1 last judged it. */
  readonly floors: Map<string, number>;
}

/** A fresh check state. */
export function newCheckState(): CheckState {
  return {
    before: new Map(),
    seenOperations: new Set(),
    members: new Map(),
    disabledAt: new Map(),
    floors: new Map(),
  };
}

/**
 * Every violation after a step at `now` (empty when safe); updates `state`. `toleranceMs`: how
 * far a Control's clock may be off the reference clock (`clock-faults.ts`).
 */
export function checkStep(
  store: MemoryCampaignStore,
  fleet: SimFleet,
  state: CheckState,
  now: number,
  toleranceMs = 0,
): string[] {
  const out: string[] = [];
  const t = store.tables;
  for (const [id, c] of t.campaigns) {
    const before = state.before.get(id);
    // Every write of a campaign's records bumps its version: unchanged ones need no check.
    if (before?.version === c.version) continue;
    const nodes = t.nodes.get(id) ?? [];
    const after = { campaign: c.campaign, nodes };
    for (const v of recordViolations(c.campaign, nodes)) out.push(`${id}: ${v}`);
    if (before !== undefined)
      for (const v of transitionViolations(before, after)) out.push(`${id}: ${v}`);
    state.before.set(id, { ...structuredClone(after), version: c.version });
  }
  const offeredPools = new Set<string>();
  const newOperations =
    t.operations.size === state.seenOperations.size ? [] : [...t.operations.values()];
  for (const o of newOperations) {
    if (state.seenOperations.has(o.id)) continue;
    state.seenOperations.add(o.id);
    const [campaignId, nodeId, kind] = o.id.split("/");
    if (campaignId !== o.campaignId || nodeId !== o.nodeId || kind !== o.kind)
      out.push(`I7: operation ${o.id} does not name its campaign, node and kind`);
    if (o.kind !== "upgrade") continue;
    const c = t.campaigns.get(o.campaignId)?.campaign;
    const n = t.nodes.get(o.campaignId)?.find((x) => x.nodeId === o.nodeId);
    if (n !== undefined) offeredPools.add(n.pool);
    const agent = fleet.agents.get(o.nodeId);
    if (c === undefined || n === undefined || agent === undefined) {
      out.push(`I4: upgrade ${o.id} names no node of a campaign`);
      continue;
    }
    if (n.batch !== c.currentBatch)
      out.push(
        `I4: ${o.nodeId} offered in batch ${n.batch + 1} while batch ${c.currentBatch + 1} runs`,
      );
    if (agent.script.behaviour === "no_cap") out.push(`I4: ${o.nodeId} offered without upgrade.v1`);
    const disabled = state.disabledAt.get(o.nodeId);
    if (disabled !== undefined && disabled <= o.createdAt)
      out.push(`I4: ${o.nodeId} offered after it was disabled`);
    if (!state.members.get(o.campaignId)?.has(o.nodeId))
      out.push(`I4: ${o.nodeId} offered by ${o.campaignId}, which did not select it`);
  }
  // A Control's clock may be off the reference one (`clock-faults.ts`): a grace it judged over
  // may still run on the reference clock.
  if (offeredPools.size > 0)
    out.push(...poolBudgetViolations(store, offeredPools, now + toleranceMs));
  out.push(...confirmFloorViolations(fleet.agents, state.floors));
  out.push(...fleet.violations.splice(0));
  return out;
}

/**
 * I5 at `now`, for the pools a step offered in: nodes in flight across live campaigns within
 * the pool's budget (every campaign of a simulated scenario has the same budget).
 */
function poolBudgetViolations(
  store: MemoryCampaignStore,
  pools: ReadonlySet<string>,
  now: number,
): string[] {
  const t = store.tables;
  const size = new Map<string, number>();
  for (const row of t.registry.values())
    if (row.enabled) size.set(row.pool, (size.get(row.pool) ?? 0) + 1);
  const flying = new Map<string, number>();
  let budget = 100;
  for (const [id, c] of t.campaigns) {
    if (c.campaign.finishedAt !== undefined) continue;
    budget = Math.min(budget, c.campaign.spec.disruptionBudgetPercent);
    for (const n of t.nodes.get(id) ?? []) {
      if (refInFlight(n, now)) flying.set(n.pool, (flying.get(n.pool) ?? 0) + 1);
    }
  }
  const out: string[] = [];
  for (const [pool, count] of flying) {
    if (!pools.has(pool)) continue;
    const limit = refPoolLimit(size.get(pool) ?? 1, budget);
    if (count > limit)
      out.push(`I5: ${count} nodes in flight in pool "${pool}" against a budget of ${limit}`);
  }
  return out;
}
