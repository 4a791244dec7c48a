/**
 * The invariants of desired versions and rollout plans, checked after every step of the
 * simulation (and, for liveness, at its end):
 *
 * - D1: a convergence campaign takes only nodes its desired version governs, that are behind
 *   it, and whose agent confirmed a sequence below its target (never backwards).
 * - D2: a convergence campaign starts only while its desired version is not halted, no other
 *   convergence campaign of it is unfinished, and its convergence campaigns since it was set
 *   failed fewer nodes than its limit (a burst of failures halts convergence).
 * - D4: a convergence campaign of a desired version a campaign set runs under that campaign's
 *   guard rails: its windows, download budget, gates and threshold are that campaign's, and it
 *   starts only while one of those windows is open (W1 then holds its offers inside them).
 * - D3 (end): every agent a desired version governs that is online, upgradable, behaves well
 *   and did not fail converging runs its target, unless its convergence was halted, an
 *   operator aborted a convergence campaign that held it, or a window of the campaign that
 *   set it was closed at some time in the run's last convergence interval (convergence waits
 *   for the window).
 * - P1: a plan's group starts only after the group before it completed (its campaign finished
 *   completed, or it had nothing to upgrade) and the plan's wait elapsed since.
 * - P2: a breach of a group (its campaign rolls back, fails or is aborted) halts the plan, and
 *   no later group starts.
 * - P3 (end): every plan has ended.
 *
 * Who a selector takes and which desired version governs a node are judged by the reference
 * model (`reference/selector.ts`), never by the engine's own functions.
 */
import { CONVERGENCE_CREATOR, PLAN_CREATOR } from "../control/campaign/index.js";
import type { MemoryCampaignStore, MemoryFleetStore } from "../control/campaign-store/index.js";
import type { SimFleet } from "./agents.js";
import {
  type RefNode,
  refCompareVersions,
  refGoverning,
  refSelects,
} from "./reference/selector.js";
import { refClosedMs, refWindowOpen } from "./reference/windows.js";

/** What the checks remember between steps. */
export interface RolloutCheckState {
  readonly seen: Set<string>;
}

/** A fresh state. */
export function newRolloutCheckState(): RolloutCheckState {
  return { seen: new Set() };
}

/** A simulated agent as the reference models see it, with whether a selector may take it. */
function candidateOf(
  store: MemoryCampaignStore,
  fleet: SimFleet,
  nodeId: string,
): (RefNode & { readonly eligible: boolean; readonly enabled: boolean }) | undefined {
  const row = store.tables.registry.get(nodeId);
  const agent = fleet.agents.get(nodeId);
  if (row === undefined || agent === undefined) return undefined;
  const everConnected = row.last_seen !== null || agent.session !== 0;
  return {
    id: nodeId,
    labels: agent.script.labels,
    pool: row.pool,
    enabled: row.enabled,
    eligible: row.enabled && everConnected,
  };
}

/** Violations after a step (empty when the rules hold); records what it saw in `state`. */
export function rolloutViolations(
  store: MemoryCampaignStore,
  fleetStore: MemoryFleetStore,
  fleet: SimFleet,
  state: RolloutCheckState,
): string[] {
  const out: string[] = [];
  const t = store.tables;
  const desired = [...fleetStore.tables.desired.values()];
  for (const [id, c] of t.campaigns) {
    if (state.seen.has(id)) continue;
    state.seen.add(id);
    if (!c.createdBy.startsWith(CONVERGENCE_CREATOR)) continue;
    const d = fleetStore.tables.desired.get(c.createdBy.slice(CONVERGENCE_CREATOR.length));
    if (d === undefined) {
      out.push(`D2: convergence campaign ${id} names no desired version`);
      continue;
    }
    if (d.haltedAt !== undefined) out.push(`D2: ${id} started after ${d.id} was halted`);
    const setter = d.setBy.startsWith("campaign:")
      ? t.campaigns.get(d.setBy.slice("campaign:".length))
      : undefined;
    if (setter !== undefined) {
      const rails = (spec: typeof c.campaign.spec) =>
        JSON.stringify([
          spec.windows ?? [],
          spec.maxDownloads ?? 0,
          spec.gates ?? [],
          spec.failureThresholdPercent,
        ]);
      if (rails(c.campaign.spec) !== rails(setter.campaign.spec))
        out.push(
          `D4: ${id} runs under ${rails(c.campaign.spec)}, not the guard rails ${rails(setter.campaign.spec)} of ${setter.campaign.id}, which set ${d.id}`,
        );
      const windows = setter.campaign.spec.windows ?? [];
      if (windows.length > 0 && !refWindowOpen(windows, c.createdAt))
        out.push(
          `D4: ${id} started at ${new Date(c.createdAt).toISOString()}, outside every window of ${setter.campaign.id}, which set ${d.id}`,
        );
    }
    const runs = [...t.campaigns.values()]
      .filter(
        (x) => x.createdBy === c.createdBy && x.campaign.id !== id && x.createdAt <= c.createdAt,
      )
      .map((x) => ({
        campaignId: x.campaign.id,
        desiredId: d.id,
        createdAt: x.createdAt,
        finished: x.campaign.finishedAt !== undefined,
        failedNodeIds: (t.nodes.get(x.campaign.id) ?? [])
          .filter((n) => n.state === "failed" || n.state === "timed_out")
          .map((n) => n.nodeId),
      }));
    if (runs.some((r) => !r.finished))
      out.push(`D2: ${id} started while another convergence campaign of ${d.id} ran`);
    const failed = runs.filter((r) => r.createdAt >= d.setAt).flatMap((r) => r.failedNodeIds);
    if (failed.length >= d.settings.maxFailures)
      out.push(
        `D2: ${id} started after ${failed.length} convergence failures of ${d.id} (limit ${d.settings.maxFailures})`,
      );
    for (const n of t.nodes.get(id) ?? []) {
      const agent = fleet.agents.get(n.nodeId);
      const candidate = candidateOf(store, fleet, n.nodeId);
      if (agent === undefined || candidate === undefined) continue;
      const takes = candidate.eligible && refSelects(d, candidate);
      if (!takes || refGoverning(candidate, desired)?.id !== d.id)
        out.push(`D1: ${id} took ${n.nodeId}, which ${d.id} does not govern`);
      if (failed.includes(n.nodeId))
        out.push(`D1: ${id} took ${n.nodeId} again after it failed converging`);
      // Written out here, not through the engine's notBehindReason: the check must not share
      // the code it checks.
      if (agent.confirmedSequence >= d.target.sequence)
        out.push(
          `D1: ${id} converges ${n.nodeId} back to ${d.target.version} (sequence ${d.target.sequence}), at or below the sequence ${agent.confirmedSequence} it confirmed`,
        );
      if (agent.version === d.target.version)
        out.push(`D1: ${id} took ${n.nodeId}, which already runs ${d.target.version}`);
    }
  }
  for (const { plan } of fleetStore.tables.plans.values()) {
    const createdAt = new Map<string, number>();
    for (const g of plan.groups) {
      const c = g.campaignId === undefined ? undefined : t.campaigns.get(g.campaignId);
      if (c !== undefined) createdAt.set(c.campaign.id, c.createdAt);
    }
    // P2: after a group's campaign rolled back, failed or was aborted, no later group starts.
    const breachedAt = plan.groups.findIndex((g) => {
      const phase =
        g.campaignId === undefined ? undefined : t.campaigns.get(g.campaignId)?.campaign.phase;
      return phase === "rolled_back" || phase === "failed" || phase === "aborted";
    });
    if (
      breachedAt >= 0 &&
      plan.groups.slice(breachedAt + 1).some((g) => g.campaignId !== undefined)
    )
      out.push(`P2: plan ${plan.id} started a group after group ${breachedAt + 1} breached`);
    plan.groups.forEach((g, i) => {
      const prev = plan.groups[i - 1];
      if (i === 0 || g.campaignId === undefined || prev?.campaignId === undefined) return;
      const before = t.campaigns.get(prev.campaignId)?.campaign;
      const at = createdAt.get(g.campaignId) ?? 0;
      if (before?.phase !== "completed" || before.finishedAt === undefined)
        out.push(
          `P1: plan ${plan.id} started group ${i + 1} while campaign ${prev.campaignId} is ${before?.phase}`,
        );
      else if (at < before.finishedAt + plan.waitMs)
        out.push(
          `P1: plan ${plan.id} started group ${i + 1} ${before.finishedAt + plan.waitMs - at} ms before its wait ended`,
        );
    });
  }
  for (const [id, c] of t.campaigns) {
    if (!c.createdBy.startsWith(PLAN_CREATOR)) continue;
    const plan = fleetStore.tables.plans.get(c.createdBy.slice(PLAN_CREATOR.length))?.plan;
    if (plan === undefined || !plan.groups.some((g) => g.campaignId === id))
      out.push(`P1: campaign ${id} names a plan group that does not name it`);
  }
  return out;
}

/**
 * D3 and P3 at the end (`end`, epoch ms) of a run whose campaigns all finished, the fleet
 * passes running every `intervalMs`.
 */
export function rolloutEndViolations(
  store: MemoryCampaignStore,
  fleetStore: MemoryFleetStore,
  fleet: SimFleet,
  end: number,
  intervalMs: number,
): string[] {
  const out: string[] = [];
  for (const { plan } of fleetStore.tables.plans.values())
    if (plan.phase === "running")
      out.push(`P3: plan ${plan.id} did not end (group ${plan.currentGroup + 1})`);
  const desired = [...fleetStore.tables.desired.values()];
  const t = store.tables;
  for (const [nodeId, agent] of fleet.agents) {
    if (agent.session === 0) continue;
    if (agent.script.behaviour !== "succeed" && agent.script.behaviour !== "dup_reports") continue;
    const candidate = candidateOf(store, fleet, nodeId);
    if (candidate === undefined || !candidate.eligible) continue;
    const d = refGoverning(candidate, desired);
    if (d === undefined || d.haltedAt !== undefined) continue;
    if (agent.version === d.target.version || agent.confirmedSequence >= d.target.sequence)
      continue;
    // Never backwards, and never a release without the agent's platform: such agents stay.
    if (refCompareVersions(agent.version, d.target.version) > 0) continue;
    const platforms = t.releases.get(d.target.version)?.artifacts.map((a) => a.platform) ?? [];
    if (agent.script.platform !== undefined && !platforms.includes(agent.script.platform)) continue;
    const failedConverging = [...t.campaigns.values()].some(
      (c) =>
        c.createdBy === `${CONVERGENCE_CREATOR}${d.id}` &&
        (t.nodes.get(c.campaign.id) ?? []).some(
          (n) =>
            n.nodeId === nodeId &&
            (n.state === "failed" ||
              n.state === "timed_out" ||
              // It kept deferring past the campaign's max defer: left behind like a failure.
              (n.state === "skipped" && n.code === "deferred")),
        ),
    );
    // An operator's abort of a convergence campaign stops convergence of the nodes it held.
    const stopped = [...t.campaigns.values()].some(
      (c) =>
        c.createdBy === `${CONVERGENCE_CREATOR}${d.id}` &&
        c.campaign.code === "aborted" &&
        (t.nodes.get(c.campaign.id) ?? []).some((n) => n.nodeId === nodeId),
    );
    // Convergence runs under the windows of the campaign that set the desired version.
    const setter = d.setBy.startsWith("campaign:")
      ? t.campaigns.get(d.setBy.slice("campaign:".length))
      : undefined;
    const windows = setter?.campaign.spec.windows ?? [];
    const waitsForWindow = windows.length > 0 && refClosedMs(windows, end - intervalMs, end) > 0;
    if (!failedConverging && !stopped && !waitsForWindow)
      out.push(
        `D3: ${nodeId} is online on ${agent.version}, behind ${d.id} (${d.target.version}), and never converged`,
      );
  }
  return out;
}
