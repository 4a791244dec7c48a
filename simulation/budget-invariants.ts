/**
 * The invariants of the campaign-wide limits, judged from the simulated agents' own record
 * (`ground-truth.ts`) and the operator's actions, never from the engine's functions:
 *
 * - B1 (failure budget): a campaign with `maxFailures` that says `completed`, and that no
 *   operator resumed, has at most its budget of true failures: agents that received its
 *   upgrade and do not run its target when it says so. (A percentage is taken of all its
 *   nodes, an upper bound of those not skipped.)
 * - B2 (minimum sample): when a batch of a campaign with `minCanaries N` that no operator
 *   resumed says it passed, at least min(N, its nodes that could take the upgrade, those carried
 *   over into it from an earlier batch not counted) of its
 *   agents were sent the upgrade and had an outcome by then: a report on it other than
 *   DEFERRED ("not now" is none), a stream back on
 *   the target after it, or a whole reconnect timeout since it. Nodes that could not take it
 *   are those never sent it that ran the target already or lack upgrade.v1.
 * - B3 (yank): no agent is sent an upgrade to a release after the operator yanked it.
 */
import type { MemoryCampaignStore } from "../control/campaign-store/index.js";
import type { SimFleet } from "./agents.js";
import { type AgentRecord, versionAt } from "./ground-truth.js";
import { deferredOnly } from "./outcome-invariants.js";
import type { IssuedCommand } from "./outcome-world.js";

/** What the budget checks remember between steps. */
export interface BudgetCheckState {
  /** When each release was yanked (virtual ms), by version. */
  readonly yankedAt: Map<string, number>;
  /** Campaigns whose completion (B1) was judged. */
  readonly completed: Set<string>;
  /** `campaign#batch` of the passed batches judged (B2). */
  readonly passed: Set<string>;
  /** Per agent, how many of its sends were checked (B3). */
  readonly sentChecked: Map<string, number>;
}

/** A fresh state. */
export function newBudgetCheckState(): BudgetCheckState {
  return { yankedAt: new Map(), completed: new Set(), passed: new Set(), sentChecked: new Map() };
}

/** What the checks read. */
export interface BudgetWorld {
  readonly store: MemoryCampaignStore;
  readonly fleet: SimFleet;
  /** Every command the simulated operator issued. */
  readonly commands: readonly IssuedCommand[];
  /** The fleet's platform when an agent's script names none. */
  readonly platform: string;
  readonly state: BudgetCheckState;
}

const upgradeId = (campaignId: string, nodeId: string) => `${campaignId}/${nodeId}/upgrade`;

function resumed(w: BudgetWorld, campaignId: string): boolean {
  return w.commands.some((c) => c.campaignId === campaignId && c.kind === "resume");
}

/** B1 at the moment a campaign with a failure budget says it completed. */
function completionViolations(w: BudgetWorld, campaignId: string, now: number): string[] {
  const c = w.store.tables.campaigns.get(campaignId)?.campaign;
  const budget = c?.spec.maxFailures;
  if (c === undefined || budget === undefined || resumed(w, campaignId)) return [];
  const nodes = w.store.tables.nodes.get(campaignId) ?? [];
  const target = c.spec.targetVersion;
  const failed: string[] = [];
  for (const n of nodes) {
    const r = w.fleet.agents.get(n.nodeId)?.record;
    if (r === undefined) continue;
    const id = upgradeId(campaignId, n.nodeId);
    const got = r.received.some((o) => o.id === id);
    const agent = w.fleet.agents.get(n.nodeId);
    // A node that only deferred never took the upgrade: not a failure.
    if (agent !== undefined && deferredOnly(agent, id)) continue;
    if (got && versionAt(r, now) !== target) failed.push(n.nodeId);
  }
  const allowed =
    budget.kind === "count" ? budget.count : Math.floor((budget.percent * nodes.length) / 100);
  if (failed.length <= allowed) return [];
  return [
    `B1: ${campaignId} completed with ${failed.length} agents not on ${target} after its upgrade (${failed.slice(0, 5).join(", ")}), over its max failures (${allowed} allowed)`,
  ];
}

/**
 * Whether the agent, sent `id` last at `sent`, had an outcome by `now`: a report on it other than
 * DEFERRED ("not now" is no outcome), a stream back on the target, or a whole reconnect timeout
 * since that send without either.
 */
function settled(
  r: AgentRecord,
  id: string,
  sent: number,
  target: string,
  timeoutMs: number,
  now: number,
) {
  if (r.reports.some((x) => x.operationId === id && x.at <= now && x.phase !== "DEFERRED"))
    return true;
  if (r.connects.some((x) => x.at > sent && x.at <= now && x.version === target)) return true;
  const answered = r.reports.some((x) => x.operationId === id && x.at >= sent && x.at <= now);
  return !answered && now - sent >= timeoutMs;
}

/** B2 at the moment a batch of a campaign with a minimum sample says it passed. */
function sampleViolations(
  w: BudgetWorld,
  campaignId: string,
  batch: number,
  now: number,
): string[] {
  const c = w.store.tables.campaigns.get(campaignId)?.campaign;
  const min = c?.spec.minCanaries;
  if (c === undefined || min === undefined || resumed(w, campaignId)) return [];
  const target = c.spec.targetVersion;
  const platforms = w.store.tables.releases.get(target)?.artifacts.map((a) => a.platform);
  let counted = 0;
  let sample = 0;
  for (const n of w.store.tables.nodes.get(campaignId) ?? []) {
    if (n.batch !== batch) continue;
    const agent = w.fleet.agents.get(n.nodeId);
    if (agent === undefined) continue;
    const r = agent.record;
    const id = upgradeId(campaignId, n.nodeId);
    const sent = r.sent.filter((o) => o.id === id && o.at <= now).at(-1)?.at;
    if (sent === undefined) {
      // Agents that cannot take the release (no upgrade.v1, its platform missing) or already
      // run it lower what the sample asks.
      const lacking = platforms?.includes(agent.script.platform ?? w.platform) === false;
      if (agent.script.behaviour === "no_cap" || lacking || versionAt(r, now) === target) continue;
      counted++;
      continue;
    }
    // A node carried over into the batch raises no sample: the batch asks what it asked without it.
    if (n.carriedFrom === undefined) counted++;
    if (settled(r, id, sent, target, c.spec.reconnectTimeoutMs, now)) sample++;
  }
  const required = Math.min(min, counted);
  if (sample >= required) return [];
  return [
    `B2: ${campaignId} passed batch ${batch + 1} with ${sample} of its agents sent the upgrade and settled; min canaries asks for ${required}`,
  ];
}

/** B3 over the sends since the last step. */
function yankViolations(w: BudgetWorld): string[] {
  const out: string[] = [];
  if (w.state.yankedAt.size === 0) return out;
  for (const [nodeId, a] of w.fleet.agents) {
    const sent = a.record.sent;
    for (let i = w.state.sentChecked.get(nodeId) ?? 0; i < sent.length; i++) {
      const op = sent[i] as (typeof sent)[number];
      const yanked = w.state.yankedAt.get(op.version);
      if (op.kind === "upgrade" && yanked !== undefined && op.at >= yanked)
        out.push(
          `B3: ${nodeId} was sent ${op.id} (${op.version}) at ${op.at} ms, after ${op.version} was yanked at ${yanked} ms`,
        );
    }
    w.state.sentChecked.set(nodeId, sent.length);
  }
  return out;
}

/** Every budget violation after a step at `now` (empty when the limits held). */
export function budgetViolations(w: BudgetWorld, now: number): string[] {
  const out = yankViolations(w);
  for (const [id, entry] of w.store.tables.campaigns) {
    const c = entry.campaign;
    if (c.phase === "completed" && !w.state.completed.has(id)) {
      w.state.completed.add(id);
      out.push(...completionViolations(w, id, now));
    }
    for (const b of c.batches) {
      const key = `${id}#${b.index}`;
      if (b.state !== "passed" || w.state.passed.has(key)) continue;
      w.state.passed.add(key);
      out.push(...sampleViolations(w, id, b.index, now));
    }
  }
  return out;
}
