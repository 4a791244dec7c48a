/**
 * What the simulated operator does at the scenario's times, as the admin API would: start the
 * rollout plan, set an old release as a pool's desired version, start the campaigns, yank the
 * target release, disable nodes and send campaign commands. Each is an event on the world's queue.
 */
import { submitCommand } from "../control/admin/campaign-commands.js";
import { type StartDeps, startCampaign } from "../control/admin/campaign-start.js";
import { setDesired } from "../control/admin/desired-commands.js";
import { disableNode } from "../control/admin/node-commands.js";
import { startRolloutPlan } from "../control/admin/plan-commands.js";
import { type CampaignState, isEndedPhase, resolveSpec } from "../control/campaign/index.js";
import { StoreOutageError } from "../control/campaign-store/index.js";
import { admissionRelease } from "../control/campaign-worker/system-start.js";
import { ControlError } from "../control/errors.js";
import { LOOK_AGAIN_MS, LOOKS, nextInLine } from "./disable-next.js";
import { backwardsDesired, type FleetScenario } from "./rollout-scenario.js";
import { OLD, SIM_RULES, type SimWorld, TARGET } from "./sim-world.js";

/**
 * Schedules the scenario's plan start, backwards desired version, campaign starts and operator
 * actions on `world`'s queue, in that order (ties run in the order scheduled). A campaign start
 * is queued to {@link SimWorld.pending} at its time and runs the administrator's start itself
 * (`control/admin/campaign-start.ts` on the memory stores, under {@link SIM_RULES}); it counts in
 * {@link SimWorld.campaignsStarted} once it started or was refused, and retries a second later
 * while a node it takes is busy or the store fails (a start whose commit applied though the call
 * failed is found listed and counts as started). Commands go through the administrator's
 * `submitCommand` too (refused when they cannot apply, as the API refuses them).
 */
export function scheduleOperator(world: SimWorld): void {
  const { scenario, clock, store, fleetStore, queue, controls, checks, say } = world;
  const plan = scenario.rollout.plan;
  const back = scenario.rollout.backwards;
  if (back !== undefined) {
    queue.at(back.at, () => world.pending.push(() => setBackwards(world, back)));
  }
  const admin: StartDeps = {
    fleet: fleetStore,
    release: async (version) => {
      const r = store.tables.releases.get(version);
      const yank = store.tables.yanks.get(version);
      if (r === undefined) return undefined;
      return yank === undefined ? admissionRelease(r) : { ...admissionRelease(r), yanked: yank };
    },
    clock,
    policy: SIM_RULES.policy,
    maxVersion: SIM_RULES.maxVersion,
  };
  if (plan !== undefined) {
    queue.at(plan.at, () => world.pending.push(() => startPlan(world, admin, plan)));
  }
  for (const plan of scenario.campaigns) {
    const start = async (): Promise<void> => {
      let campaign: CampaignState;
      try {
        // A start whose commit applied but reported an error (a lost connection) did start:
        // the operator sees its campaign listed and does not start it again.
        const started = store.tables.campaigns.get(plan.id)?.campaign;
        campaign =
          started ??
          (await startCampaign(admin, {
            spec: resolveSpec(plan.spec, SIM_RULES.policy),
            actor: { name: "operator", ip: "" },
            id: plan.id,
          }));
      } catch (error) {
        if (error instanceof ControlError && error.code !== "node_busy") {
          world.campaignsStarted++;
          say(`${plan.id} not started: ${error.message}`);
          return;
        }
        // A node busy in another campaign, or the store failed: try again a second later.
        queue.at(clock.ms + 1000, () => world.pending.push(start));
        return;
      }
      world.campaignsStarted++;
      const nodes = store.tables.nodes.get(plan.id) ?? [];
      checks.members.set(plan.id, new Set(nodes.map((n) => n.nodeId)));
      say(`${plan.id} starts over ${nodes.length} nodes in ${campaign.batches.length} batches`);
      controls.wake(plan.id);
    };
    queue.at(plan.at, () => world.pending.push(start));
  }
  for (const y of scenario.yanks ?? []) {
    const yank = (): void => {
      try {
        store.yankRelease({ version: y.version, at: clock.ms, by: "operator", reason: y.reason });
      } catch (error) {
        if (!(error instanceof StoreOutageError)) throw error;
        // The database is down: the operator tries again a second later.
        queue.at(clock.ms + 1000, yank);
        return;
      }
      world.budgetChecks.yankedAt.set(y.version, clock.ms);
      say(`operator yanks ${y.version}: ${y.reason}`);
      for (const id of store.tables.campaigns.keys()) controls.wake(id);
    };
    queue.at(y.at, yank);
  }
  for (const action of scenario.operator) {
    queue.at(action.at, () => {
      if (action.kind === "disable") {
        world.pending.push(() => disableNodes(world, [action.nodeId]));
        return;
      }
      if (action.kind === "disable_next") {
        disableNextInLine(world, action.campaignId, action.count, LOOKS);
        return;
      }
      if (!store.tables.campaigns.has(action.campaignId)) return;
      const submit = async (): Promise<void> => {
        const phaseBefore = store.tables.campaigns.get(action.campaignId)?.campaign.phase;
        try {
          await submitCommand(
            fleetStore,
            action.campaignId,
            { ...action.command, reason: "simulated operator" },
            { name: "operator", ip: "" },
            clock.now(),
          );
        } catch (error) {
          if (error instanceof ControlError) {
            say(`operator: ${action.command.kind} ${action.campaignId} refused: ${error.message}`);
            return;
          }
          // The store failed: the operator tries again a second later.
          queue.at(clock.ms + 1000, () => world.pending.push(submit));
          return;
        }
        world.outcomeChecks.commands.push({
          campaignId: action.campaignId,
          kind: action.command.kind,
          at: clock.ms,
          rollback: action.command.kind === "abort" && action.command.rollback,
          phase: phaseBefore,
        });
        say(`operator: ${action.command.kind} ${action.campaignId}`);
        controls.wake(action.campaignId);
      };
      world.pending.push(submit);
    });
  }
}

/** The simulated operator, as the audit log names it. */
const OPERATOR = { name: "operator", ip: "" };

/**
 * Disables `nodeIds` through the administrator's disable, one after another in one step (no
 * decision runs between them); what the store failed to disable is tried again a second later.
 */
async function disableNodes(world: SimWorld, nodeIds: readonly string[]): Promise<void> {
  const { fleetStore, clock, queue, checks, say } = world;
  for (const [i, nodeId] of nodeIds.entries()) {
    const command = { nodeId, reason: "simulated operator", actor: OPERATOR };
    let changed: boolean;
    try {
      changed = await disableNode(fleetStore, { ...command, now: clock.now() });
    } catch (error) {
      if (error instanceof ControlError) continue;
      // The store failed: the operator tries the rest again a second later.
      const rest = nodeIds.slice(i);
      queue.at(clock.ms + 1000, () => world.pending.push(() => disableNodes(world, rest)));
      return;
    }
    if (!changed) continue;
    checks.disabledAt.set(nodeId, clock.ms);
    world.history.append({ kind: "disable", at: clock.ms, nodeId });
    say(`operator disables ${nodeId}`);
  }
}

/**
 * Disables the `count` nodes the campaign would offer next (`disable-next.ts`), as an operator
 * reading `campaign show` and `node list` would pick them; while fewer than two online nodes wait
 * in its current batch, looks
 * again later, `looks` times at most, and not once the campaign has finished.
 */
function disableNextInLine(world: SimWorld, campaignId: string, count: number, looks: number) {
  const row = world.store.tables.campaigns.get(campaignId);
  if (looks <= 0 || (row !== undefined && isEndedPhase(row.campaign.phase))) return;
  const nodes = world.store.tables.nodes.get(campaignId) ?? [];
  const online = (nodeId: string) => world.fleet.connected(nodeId) !== undefined;
  const line = row === undefined ? [] : nextInLine(nodes, row.campaign.currentBatch, count, online);
  if (line.length < 2) {
    world.queue.at(world.clock.ms + LOOK_AGAIN_MS, () =>
      disableNextInLine(world, campaignId, count, looks - 1),
    );
    return;
  }
  world.say(`operator disables the next in line of ${campaignId}: ${line.join(", ")}`);
  world.pending.push(() => disableNodes(world, line));
}

/**
 * Starts the scenario's plan through the administrator's plan start (its admission included);
 * retries a second later while the store fails.
 */
async function startPlan(
  world: SimWorld,
  admin: StartDeps,
  p: NonNullable<FleetScenario["rollout"]["plan"]>,
): Promise<void> {
  try {
    await startRolloutPlan(admin, {
      id: p.id,
      template: resolveSpec(p.template, SIM_RULES.policy),
      groups: p.pools.map((pool) => ({
        name: pool,
        selector: { labels: {}, pools: [pool], nodeIds: [] },
      })),
      waitMs: p.waitMs,
      actor: OPERATOR,
      now: world.clock.now(),
    });
  } catch (error) {
    if (error instanceof ControlError) {
      world.planSettled = true;
      world.say(`${p.id} not started: ${error.message}`);
      return;
    }
    world.queue.at(world.clock.ms + 1000, () =>
      world.pending.push(() => startPlan(world, admin, p)),
    );
    return;
  }
  world.planSettled = true;
  world.say(`${p.id} starts over ${p.pools.join(" → ")}, ${p.waitMs / 1000} s between groups`);
}

/**
 * Registers the old release when it is not yet (as an operator would before pointing a desired
 * version at it) and sets it as one pool's desired version through the administrator's
 * desired set; retries a second later while the store fails.
 */
async function setBackwards(
  world: SimWorld,
  back: NonNullable<FleetScenario["rollout"]["backwards"]>,
): Promise<void> {
  const { store, fleetStore, clock, say } = world;
  const releases = store.tables.releases;
  const target = releases.get(TARGET.version);
  if (!releases.has(OLD) && target !== undefined) {
    releases.set(OLD, { ...target, version: OLD, sequence: 1 });
  }
  const wanted = backwardsDesired(back, { version: OLD, sequence: 1 }, clock.ms);
  try {
    const set = await setDesired(
      {
        fleet: fleetStore,
        release: async (version) => {
          const r = releases.get(version);
          return r === undefined ? undefined : admissionRelease(r);
        },
        policy: wanted.settings,
      },
      {
        targetVersion: OLD,
        selector: wanted.selector,
        exclude: wanted.exclude,
        maxFailures: wanted.settings.maxFailures,
        disruptionBudgetPercent: wanted.settings.disruptionBudgetPercent,
        reason: "simulated operator",
        actor: OPERATOR,
        now: clock.now(),
      },
    );
    say(`operator sets ${OLD} as the desired version of pool "${back.pool}" (${set.desired.id})`);
  } catch (error) {
    if (error instanceof ControlError) {
      say(`operator: desired set refused: ${error.message}`);
      return;
    }
    world.queue.at(clock.ms + 1000, () => world.pending.push(() => setBackwards(world, back)));
  }
}
