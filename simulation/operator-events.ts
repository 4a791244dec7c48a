/**
 * What the simulated operator does at the scenario's times, as the admin API would: start the
 * rollout plan, set an old release as a pool's desired version, start the campaigns, disable
 * nodes and send campaign commands. Each is an event on the world's queue.
 */
import {
  type Candidate,
  createCampaign,
  createPlan,
  planCampaign,
  resolveSpec,
} from "../control/campaign/index.js";
import type { MemoryFleetStore } from "../control/campaign-store/index.js";
import { backwardsDesired, type FleetScenario } from "./rollout-scenario.js";
import { OLD, type SimWorld, TARGET } from "./sim-world.js";

/**
 * Schedules the scenario's plan start, backwards desired version, campaign starts and operator
 * actions on `world`'s queue, in that order (ties run in the order scheduled). A campaign start
 * is queued to {@link SimWorld.pending} at its time, counts in
 * {@link SimWorld.campaignsStarted} once it started or selected no node, and retries a second
 * later when the store refuses it.
 */
export function scheduleOperator(world: SimWorld): void {
  const { scenario, clock, store, fleetStore, queue, fleet, controls, checks, say } = world;
  const plan = scenario.rollout.plan;
  if (plan !== undefined) {
    queue.at(plan.at, () => startPlan(fleetStore, plan, clock.ms, say));
  }
  const back = scenario.rollout.backwards;
  if (back !== undefined) {
    queue.at(back.at, () => {
      const d = backwardsDesired(back, { version: OLD, sequence: 1 }, clock.ms);
      fleetStore.tables.desired.set(d.id, d);
      say(`operator sets ${OLD} as the desired version of pool "${back.pool}" (${d.id})`);
    });
  }
  for (const plan of scenario.campaigns) {
    const start = async (): Promise<void> => {
      const candidates: Candidate[] = [];
      for (const row of store.tables.registry.values()) {
        const agent = fleet.agents.get(row.id);
        candidates.push({
          id: row.id,
          labels: agent?.script.labels ?? {},
          pool: row.pool,
          enabled: row.enabled,
          everConnected: row.last_seen !== null,
          capabilities: row.capabilities,
          agentVersion: row.agent_version,
        });
      }
      const spec = resolveSpec(plan.spec);
      const planned = planCampaign(
        spec,
        candidates.filter((c) => c.enabled && c.everConnected),
      );
      if (planned.totalNodes === 0) {
        world.campaignsStarted++;
        say(`${plan.id} not started: no node selected`);
        return;
      }
      const { campaign, nodes } = createCampaign({
        id: plan.id,
        spec,
        plan: planned,
        target: TARGET,
        now: clock.ms,
      });
      try {
        await store.transaction((tx) =>
          tx.insertCampaign({
            campaign,
            nodes,
            createdBy: "operator",
            createdByIp: "",
            now: clock.now(),
          }),
        );
      } catch {
        queue.at(clock.ms + 1000, () => world.pending.push(start));
        return;
      }
      world.campaignsStarted++;
      checks.members.set(plan.id, new Set(nodes.map((n) => n.nodeId)));
      say(`${plan.id} starts over ${nodes.length} nodes in ${campaign.batches.length} batches`);
      controls.wake(plan.id);
    };
    queue.at(plan.at, () => world.pending.push(start));
  }
  for (const action of scenario.operator) {
    queue.at(action.at, () => {
      if (action.kind === "disable") {
        const row = store.tables.registry.get(action.nodeId);
        if (row === undefined || !row.enabled) return;
        store.putNode({ ...row, enabled: false });
        checks.disabledAt.set(action.nodeId, clock.ms);
        say(`operator disables ${action.nodeId}`);
        return;
      }
      if (!store.tables.campaigns.has(action.campaignId)) return;
      store.tables.addCommand({
        campaignId: action.campaignId,
        kind: action.command.kind,
        rollback: action.command.kind === "abort" ? action.command.rollback : false,
        reason: "simulated operator",
        actor: "operator",
        actor_ip: "",
      });
      world.outcomeChecks.commands.push({
        campaignId: action.campaignId,
        kind: action.command.kind,
        at: clock.ms,
      });
      say(`operator: ${action.command.kind} ${action.campaignId}`);
      controls.wake(action.campaignId);
    });
  }
}

/** Starts the scenario's plan as the admin API would. */
function startPlan(
  fleetStore: MemoryFleetStore,
  p: NonNullable<FleetScenario["rollout"]["plan"]>,
  now: number,
  say: (line: string) => void,
): void {
  const plan = createPlan({
    id: p.id,
    template: resolveSpec(p.template),
    groups: p.pools.map((pool) => ({
      name: pool,
      selector: { labels: {}, pools: [pool], nodeIds: [] },
    })),
    waitMs: p.waitMs,
    now,
    createdBy: "operator",
  });
  fleetStore.tables.plans.set(plan.id, { plan, version: 1 });
  say(`${plan.id} starts over ${p.pools.join(" → ")}, ${p.waitMs / 1000} s between groups`);
}
