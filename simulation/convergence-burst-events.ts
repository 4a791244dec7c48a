/**
 * The operator's part of a convergence burst (`convergence-bursts.ts`): a minute after the
 * burst's agents enrolled, the target release is set as the desired version of their group
 * through the administrator's desired set, with the default burst limit and the campaigns'
 * disruption budget (every campaign and desired version of a scenario has one budget, as I5
 * counts it); retried a second later while the store fails.
 */
import { setDesired } from "../control/admin/desired-commands.js";
import { defaultConvergenceSettings } from "../control/campaign/index.js";
import { admissionRelease } from "../control/campaign-worker/system-start.js";
import { ControlError } from "../control/errors.js";
import { BURST_GROUP, BURST_SET_AFTER_MS, scenarioBudget } from "./convergence-bursts.js";
import type { SimWorld } from "./sim-world.js";

const MIN = 60_000;

/** Schedules the desired set of the scenario's burst on `world`'s queue (none without a burst). */
export function scheduleConvergenceBurst(world: SimWorld): void {
  const { scenario, queue } = world;
  const burst = scenario.agents.filter((a) => a.labels.group === BURST_GROUP);
  const first = burst[0];
  const target = scenario.campaigns[0]?.spec.targetVersion;
  if (first === undefined || target === undefined) return;
  const budget = scenarioBudget(scenario);
  const set = async (): Promise<void> => {
    const { store, fleetStore, clock, say } = world;
    try {
      const result = await setDesired(
        {
          fleet: fleetStore,
          release: async (version) => {
            const r = store.tables.releases.get(version);
            const yank = store.tables.yanks.get(version);
            if (r === undefined) return undefined;
            return yank === undefined
              ? admissionRelease(r)
              : { ...admissionRelease(r), yanked: yank };
          },
          policy: defaultConvergenceSettings(5 * MIN, 0),
        },
        {
          targetVersion: target,
          selector: { labels: { group: BURST_GROUP }, pools: [], nodeIds: [] },
          exclude: { nodeIds: [], tags: {} },
          maxFailures: undefined,
          disruptionBudgetPercent: budget,
          reason: "simulated operator",
          actor: { name: "operator", ip: "" },
          now: clock.now(),
        },
      );
      say(
        `operator sets ${target} as the desired version of group "${BURST_GROUP}" (${result.desired.id}, ${burst.length} agents that fail it)`,
      );
    } catch (error) {
      if (error instanceof ControlError) {
        say(`operator: desired set refused: ${error.message}`);
        return;
      }
      queue.at(clock.ms + 1000, () => world.pending.push(set));
    }
  };
  queue.at(first.onlineAt + BURST_SET_AFTER_MS, () => world.pending.push(set));
}
