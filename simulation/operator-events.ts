/**
 * What the simulated operator does at the scenario's times, as the admin API would: start the
 * rollout plan, set an old release as a pool's desired version, start the campaigns, disable
 * nodes and send campaign commands. Each is an event on the world's queue.
 */
import {
  type Admission,
  admit,
  createCampaign,
  createPlan,
  refusalMessage,
  resolveSpec,
} from "../control/campaign/index.js";
import type { MemoryFleetStore } from "../control/campaign-store/index.js";
import { admissionRelease } from "../control/campaign-worker/system-start.js";
import { backwardsDesired, type FleetScenario } from "./rollout-scenario.js";
import { OLD, SIM_RULES, type SimWorld } from "./sim-world.js";

/**
 * Schedules the scenario's plan start, backwards desired version, campaign starts and operator
 * actions on `world`'s queue, in that order (ties run in the order scheduled). A campaign start
 * is queued to {@link SimWorld.pending} at its time and goes through the one admission
 * (`admit`, under {@link SIM_RULES}) as an administrator's start does; it counts in
 * {@link SimWorld.campaignsStarted} once it started or was refused, and retries a second later
 * while a node it takes is busy or the store fails.
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
      let answer: Admission;
      let nodes: number;
      let batches: number;
      try {
        ({ answer, nodes, batches } = await fleetStore.transaction(async (tx) => {
          await tx.lockStarts();
          const rows = await tx.readFleet();
          const spec = resolveSpec(plan.spec, SIM_RULES.policy);
          const offered = store.tables.releases.get(spec.targetVersion);
          const answer = admit({
            intent: "start",
            origin: "operator",
            spec,
            rules: SIM_RULES,
            release: offered === undefined ? undefined : admissionRelease(offered),
            candidates: rows.map((r) => ({
              ...r,
              labels: fleet.agents.get(r.id)?.script.labels ?? r.labels,
              agentVersion: r.agentVersion || undefined,
              platform: r.platform || undefined,
            })),
            busy: new Map(rows.filter((r) => r.busy).map((r) => [r.id, ""])),
            now: clock.ms,
          });
          if (!answer.ok) return { answer, nodes: 0, batches: 0 };
          const created = createCampaign({
            id: plan.id,
            spec,
            plan: answer.plan,
            target: answer.target,
            now: clock.ms,
          });
          await tx.campaigns.insertCampaign({
            ...created,
            createdBy: "operator",
            createdByIp: "",
            now: clock.now(),
          });
          checks.members.set(plan.id, new Set(created.nodes.map((n) => n.nodeId)));
          return { answer, nodes: created.nodes.length, batches: created.campaign.batches.length };
        }));
      } catch {
        queue.at(clock.ms + 1000, () => world.pending.push(start));
        return;
      }
      if (!answer.ok && answer.refusal.kind === "busy") {
        queue.at(clock.ms + 1000, () => world.pending.push(start));
        return;
      }
      world.campaignsStarted++;
      if (!answer.ok) {
        say(`${plan.id} not started: ${refusalMessage(answer.refusal)}`);
        return;
      }
      say(`${plan.id} starts over ${nodes} nodes in ${batches} batches`);
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
