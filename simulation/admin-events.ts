/**
 * The simulated operator's other admin commands, each through the administrator's own
 * operation on the memory stores (as the admin API runs it on PostgreSQL), in a small share of
 * the scenarios that are not calm: a reset of a node whose campaigns are over (its streams are
 * cut, it comes back), the clear of a desired version (its nodes no longer converge: D2 flags
 * any convergence campaign of it started later, D3 no longer expects them), and the abort of
 * a running plan, with or without rollback (no group starts after it: P2; its running
 * campaign is aborted: O4). Drawn from a seed stream of their own, so the rest of a seed's
 * scenario is the same with or without them.
 */
import { createPrng, deriveSeed } from "../agent-sim/prng.js";
import { clearDesired } from "../control/admin/desired-commands.js";
import { resetNode } from "../control/admin/node-commands.js";
import { abortRolloutPlan } from "../control/admin/plan-commands.js";
import { ControlError } from "../control/errors.js";
import type { SimWorld } from "./sim-world.js";

const MIN = 60_000;
/** The share of the scenarios that are not calm in which a finished node is reset. */
const RESET_SHARE = 0.15;
/** The share of the desired-version scenarios in which the operator clears one. */
const CLEAR_SHARE = 0.25;
/** The share of the plan scenarios in which the operator aborts the plan. */
const ABORT_SHARE = 0.25;
const OPERATOR = { name: "operator", ip: "" };

/** Schedules the scenario's resets, desired-version clears and plan aborts on `world`'s queue. */
export function scheduleAdminActions(world: SimWorld): void {
  const { seed, scenario } = world;
  if (scenario.calm) return;
  const prng = createPrng(deriveSeed(seed, 13));
  const draw = (lo: number, hi: number) => lo + Math.floor(prng.next() * (hi - lo + 1));
  // A run ends once its campaigns and plans are over, so each action falls while they run.
  const lastStart = Math.max(3000, ...scenario.campaigns.map((c) => c.at));
  const firstStart = Math.min(lastStart, ...scenario.campaigns.map((c) => c.at));
  if (prng.next() < RESET_SHARE) {
    const at = firstStart + draw(1, 15) * MIN;
    const pick = prng.next();
    operatorAt(world, at, () => reset(world, pick));
  }
  const rollout = scenario.rollout;
  if (rollout.kind === "desired" && prng.next() < CLEAR_SHARE) {
    const span = Math.floor((rollout.settleUntil - lastStart) / MIN);
    const at = lastStart + draw(5, Math.max(5, span - 5)) * MIN;
    operatorAt(world, at, () => clear(world));
  }
  if (rollout.plan !== undefined && prng.next() < ABORT_SHARE) {
    const plan = rollout.plan;
    const at = plan.at + draw(1, 20) * MIN;
    const rollback = prng.next() < 0.5;
    operatorAt(world, at, () => abort(world, plan.id, rollback));
  }
}

/** Runs `work` at `at` among the world's pending work; again a second later while the store fails. */
function operatorAt(world: SimWorld, at: number, work: () => Promise<void>): void {
  const attempt = async (): Promise<void> => {
    try {
      await work();
    } catch (error) {
      if (error instanceof ControlError) {
        world.say(`operator: refused: ${error.message}`);
        return;
      }
      world.queue.at(world.clock.ms + 1000, () => world.pending.push(attempt));
    }
  };
  world.queue.at(at, () => world.pending.push(attempt));
}

/** Resets one of the nodes that were in a campaign and are in none unfinished now (`pick` in [0, 1)). */
async function reset(world: SimWorld, pick: number): Promise<void> {
  const { store, fleetStore, clock, say } = world;
  const fleet = await fleetStore.transaction((tx) => tx.readFleet());
  const member = new Set([...store.tables.nodes.values()].flat().map((n) => n.nodeId));
  const finished = fleet.filter((r) => !r.busy && member.has(r.id)).map((r) => r.id);
  const nodeId = finished[Math.floor(pick * finished.length)];
  if (nodeId === undefined) {
    say("operator: no node is out of every campaign to reset");
    return;
  }
  await resetNode(fleetStore, {
    nodeId,
    reason: "simulated operator",
    actor: OPERATOR,
    now: clock.now(),
  });
  say(`operator resets ${nodeId}`);
}

/** Clears the oldest desired version, when there is one. */
async function clear(world: SimWorld): Promise<void> {
  const { fleetStore, clock, say } = world;
  const [oldest] = await fleetStore.transaction((tx) => tx.readDesired());
  if (oldest === undefined) {
    say("operator: no desired version to clear");
    return;
  }
  await clearDesired(fleetStore, oldest.id, OPERATOR, clock.now());
  say(`operator clears desired version ${oldest.id} (${oldest.target.version})`);
}

/** Aborts plan `id`, with or without rollback of its running group's current batch. */
async function abort(world: SimWorld, id: string, rollback: boolean): Promise<void> {
  const { fleetStore, clock, say, controls } = world;
  const at = clock.ms;
  const aborted = await abortRolloutPlan(fleetStore, {
    id,
    reason: "simulated operator",
    rollback,
    actor: OPERATOR,
    now: clock.now(),
  });
  say(`operator aborts plan ${id}${rollback ? " with rollback" : ""}`);
  const campaignId = aborted.abortedCampaign;
  if (campaignId === undefined) return;
  world.outcomeChecks.commands.push({ campaignId, kind: "abort", at });
  controls.wake(campaignId);
}
