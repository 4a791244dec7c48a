/**
 * A rollback decided across a takeover for a node that is still away. In a share of the
 * scenarios with faults that are not calm, one campaign without gates, operator commands or
 * other takeovers becomes one batch of 100 % that pauses on its first failure, over well-behaved
 * agents of its group but one, which is `late_return`: it applies the upgrade and stays away
 * past the reconnect timeout (failed, reconnect_timeout), then comes back on the target. While it
 * is away, the leader crashes and the operator aborts the paused campaign with rollback. The new
 * leader decides the rollback without having read that final node's registry row (a loaded
 * campaign holds the rows of its open nodes), so it records no boot for the rollback; the row it
 * reads next is the node's Hello from before the upgrade: its previous version and the boot it
 * was offered on. A leader that took that row for a return would record the node rolled back
 * while it still runs the target (I2, O1).
 *
 * Drawn from a seed stream of its own, so the rest of a seed's scenario is the same with or
 * without it.
 */
import { createPrng, deriveSeed } from "../agent-sim/prng.js";
import { submitCommand } from "../control/admin/campaign-commands.js";
import { isEndedPhase, isFinal } from "../control/campaign/index.js";
import { ControlError } from "../control/errors.js";
import type { AgentScript } from "./agent-script.js";
import { crashLeader } from "./fault-events.js";
import type { FleetScenario } from "./rollout-scenario.js";
import type { SimWorld } from "./sim-world.js";
import { groupMembers, pick, takenByOthers, wellBehaved } from "./variant-campaigns.js";

/** The share of the eligible scenarios that get the late rollback. */
const SHARE = 0.5;
/** How long the late node stays away after its restart, beyond the reconnect timeout. */
const AWAY_MS = 240_000;
/** How often the world looks whether the late node has failed. */
const LOOK_MS = 2000;
/** The leader stays down this long; the Control standing by takes over meanwhile. */
const DOWN_MS = 5000;
/** The operator aborts this long after the crash. */
const ABORT_AFTER_MS = 8000;

/** `s` with, for a share of its seeds, the late rollback across a takeover (the file's TSDoc). */
export function withLateRollback(s: FleetScenario): FleetScenario {
  if (s.calm || s.edge || s.faults.length === 0 || s.campaigns.length === 0) return s;
  const prng = createPrng(deriveSeed(s.seed, 42));
  if (prng.next() >= SHARE) return s;
  const free = s.campaigns.filter((c) => !takenByOthers(s, c));
  if (free.length === 0) return s;
  const c = pick(prng, free);
  const members = groupMembers(s, c);
  if (members.length < 2) return s;
  const late = pick(prng, members);
  const agents = s.agents.map((a): AgentScript => {
    if (!members.includes(a)) return a;
    return wellBehaved(a, c, a === late ? { behaviour: "late_return", restartMs: AWAY_MS } : {});
  });
  const spec = {
    ...c.spec,
    batches: [{ percent: 100, minDurationMs: 0 }],
    ramp: undefined,
    windows: undefined,
    soakMs: 0,
    concurrency: 0,
    failureThresholdPercent: 0,
    onBreach: "pause" as const,
  };
  return {
    ...s,
    agents,
    campaigns: s.campaigns.map((x) => (x === c ? { ...x, spec } : x)),
    lateRollback: { campaignId: c.id, nodeId: late.id },
  };
}

/**
 * Puts the scenario's late rollback on `world`: once the late node's record is final while its
 * agent is away, the leader crashes, and {@link ABORT_AFTER_MS} later the operator aborts the
 * campaign with rollback through the administrator's command. Nothing without one, nor once the
 * campaign has ended.
 */
export function scheduleLateRollback(world: SimWorld): void {
  const plan = world.scenario.lateRollback;
  if (plan === undefined) return;
  const { queue, clock, store, fleet, say } = world;
  const abort = async (): Promise<void> => {
    const row = store.tables.campaigns.get(plan.campaignId);
    if (row === undefined || isEndedPhase(row.campaign.phase)) return;
    const phase = row.campaign.phase;
    try {
      const command = { kind: "abort", rollback: true, reason: "simulated operator" } as const;
      await submitCommand(world.fleetStore, plan.campaignId, command, OPERATOR, clock.now());
    } catch (error) {
      if (error instanceof ControlError) return;
      queue.at(clock.ms + 1000, () => world.pending.push(abort));
      return;
    }
    world.outcomeChecks.commands.push({
      campaignId: plan.campaignId,
      kind: "abort",
      at: clock.ms,
      rollback: true,
      phase,
    });
    say(`operator: abort ${plan.campaignId} with rollback, ${plan.nodeId} still away`);
    world.controls.wake(plan.campaignId);
  };
  const look = (): void => {
    const row = store.tables.campaigns.get(plan.campaignId);
    if (row !== undefined && isEndedPhase(row.campaign.phase)) return;
    const node = store.tables.nodes.get(plan.campaignId)?.find((n) => n.nodeId === plan.nodeId);
    if (node === undefined || !isFinal(node.state) || fleet.connected(plan.nodeId) !== undefined) {
      queue.at(clock.ms + LOOK_MS, look);
      return;
    }
    say(`${plan.nodeId} is ${node.state} and away: the leader crashes`);
    crashLeader(world, DOWN_MS);
    queue.at(clock.ms + ABORT_AFTER_MS, () => world.pending.push(abort));
  };
  queue.at(LOOK_MS, look);
}

/** The simulated operator, as the audit log names it. */
const OPERATOR = { name: "operator", ip: "" };
