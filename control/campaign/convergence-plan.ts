/**
 * Convergence planning: from the desired versions, the fleet and the convergence campaigns,
 * what convergence does now (start a campaign, halt a desired version and stop its running
 * campaign), and the spec of a convergence campaign. Pure: the worker's fleet pass is its
 * shell.
 */
import {
  CONVERGENCE_MAX_NODES,
  type DesiredVersion,
  desiredGovernor,
  type FleetNode,
  notBehindReason,
} from "./desired.js";
import { failureAllowance } from "./failure-budget.js";
import {
  type CampaignCode,
  type CampaignPhase,
  isEndedPhase,
  isFailure,
  type NodeState,
} from "./model.js";
import type { CampaignSpec } from "./spec.js";
import { windowOpen } from "./windows.js";

/** One convergence campaign of a desired version, as convergence needs it. */
export interface ConvergenceRun {
  readonly campaignId: string;
  readonly desiredId: string;
  readonly createdAt: number;
  readonly finished: boolean;
  /** Its nodes that ended failed or timed_out. */
  readonly failedNodeIds: readonly string[];
  /**
   * Its phase. A convergence campaign ends `failed` on its own only when its failure budget
   * (the rest of the burst limit, {@link convergenceSpec}) or a yank of its target stops it,
   * and either halts its desired version first; so one that ended in any phase but `completed`
   * otherwise was ended by an operator (an abort). Undefined: not known, taken as going its way.
   */
  readonly phase?: CampaignPhase | undefined;
  /**
   * Why it stopped, when it ended other than `completed`: a guard rail of its desired version
   * (`batch_failed`, `max_failures_exceeded`) or an operator (`aborted`, or undefined: not
   * read, taken as an operator's).
   */
  readonly code?: CampaignCode | undefined;
}

/** What {@link planConvergence} reads. */
export interface ConvergenceInput {
  readonly desired: readonly DesiredVersion[];
  readonly fleet: readonly FleetNode[];
  /** Every convergence campaign (any desired version, any age). */
  readonly runs: readonly ConvergenceRun[];
  /** Epoch ms: a desired version starts nothing while every window of its guard rails is closed. */
  readonly now: number;
}

/** What convergence does now. */
export type ConvergenceStep =
  | {
      readonly kind: "converge";
      readonly desiredId: string;
      readonly campaignId: string;
      readonly nodeIds: readonly string[];
    }
  | {
      readonly kind: "halt";
      readonly desiredId: string;
      readonly failures: number;
      readonly failedNodeIds: readonly string[];
      readonly message: string;
      /**
       * Its convergence campaigns still running or paused: each is aborted (without rollback),
       * so a halt stops that version's offers at once rather than when the campaign ends.
       */
      readonly abortCampaignIds: readonly string[];
    };

/** The failures of a desired version's convergence since it was set, and their nodes. */
export function convergenceFailures(d: DesiredVersion, runs: readonly ConvergenceRun[]): string[] {
  const failed: string[] = [];
  for (const r of runs) {
    if (r.desiredId !== d.id || r.createdAt < d.setAt) continue;
    for (const id of r.failedNodeIds) failed.push(id);
  }
  return failed;
}

/** True when a convergence campaign ended in a phase other than `completed`. */
function stoppedEarly(r: ConvergenceRun): boolean {
  return r.phase !== undefined && isEndedPhase(r.phase) && r.phase !== "completed";
}

/** The codes of a convergence campaign stopped by a guard rail it carried, not by a person. */
const GUARD_RAIL_STOPS: ReadonlySet<CampaignCode> = new Set([
  "batch_failed",
  "max_failures_exceeded",
  "min_canaries_unmet",
]);

/** The id of the `n`-th convergence campaign of a desired version (1-based). */
export function convergenceCampaignId(desiredId: string, n: number): string {
  return `${desiredId}-${n}`;
}

/** True when `campaignId` has the form of a convergence campaign's id ({@link convergenceCampaignId}). */
export function isConvergenceCampaignId(campaignId: string): boolean {
  return /^d-[0-9a-f]{10}-[1-9][0-9]*$/.test(campaignId);
}

/**
 * What convergence does now, for every desired version:
 * - halted: nothing;
 * - its convergence campaigns since it was set have `maxFailures` or more failed nodes: halt
 *   (the burst of failures), starting nothing and aborting its running convergence campaign;
 * - a convergence campaign of it since it was set ended other than `completed` (an operator
 *   aborted it, or a guard rail it carried stopped it: its threshold or failure budget):
 *   halt, starting nothing, until the desired version is set again;
 * - a convergence campaign of it is unfinished: nothing (one at a time);
 * - every maintenance window of its guard rails is closed at `now`: nothing (its late nodes
 *   wait for the window, rather than sit busy in a campaign that may not offer);
 * - else, the nodes it governs that are behind it ({@link notBehindReason}), online, enabled,
 *   upgradable (upgrade.v1), in no unfinished campaign, and not failed by one of its
 *   convergence campaigns since it was set: one convergence campaign over them (at most
 *   {@link CONVERGENCE_MAX_NODES}, in id order), when there is any.
 */
export function planConvergence(input: ConvergenceInput): ConvergenceStep[] {
  const out: ConvergenceStep[] = [];
  const behind = new Map<string, string[]>();
  const governing = desiredGovernor(input.desired);
  for (const node of input.fleet) {
    if (!node.online || node.busy || !node.enabled || !node.everConnected) continue;
    if (!node.capabilities.includes("upgrade.v1")) continue;
    const d = governing(node);
    if (d === undefined || d.haltedAt !== undefined) continue;
    if (notBehindReason(node, d.target) !== undefined) continue;
    const list = behind.get(d.id) ?? [];
    list.push(node.id);
    behind.set(d.id, list);
  }
  for (const d of input.desired) {
    if (d.haltedAt !== undefined) continue;
    const failed = convergenceFailures(d, input.runs);
    const mine = input.runs.filter((r) => r.desiredId === d.id);
    const halt = (message: string): ConvergenceStep => ({
      kind: "halt",
      desiredId: d.id,
      failures: failed.length,
      failedNodeIds: failed,
      message,
      abortCampaignIds: mine
        .filter((r) => !r.finished && (r.phase === undefined || !isEndedPhase(r.phase)))
        .filter((r) => r.phase !== "rolling_back")
        .map((r) => r.campaignId),
    });
    if (failed.length >= d.settings.maxFailures) {
      out.push(
        halt(
          `convergence to ${d.target.version} halted: ${failed.length} node(s) failed (${failed.slice(0, 10).join(", ")}), the limit is ${d.settings.maxFailures}`,
        ),
      );
      continue;
    }
    const stopped = mine.find((r) => r.createdAt >= d.setAt && stoppedEarly(r));
    if (stopped !== undefined) {
      const why =
        stopped.code !== undefined && GUARD_RAIL_STOPS.has(stopped.code)
          ? `stopped on a guard rail of the campaign that set it (${stopped.code})`
          : "was aborted by an operator";
      out.push(
        halt(
          `convergence to ${d.target.version} halted: its campaign ${stopped.campaignId} ${why}; set the desired version again to resume`,
        ),
      );
      continue;
    }
    if (mine.some((r) => !r.finished)) continue;
    if (!windowOpen(d.settings.guardRails?.windows, input.now)) continue;
    const excluded = new Set(failed);
    const nodeIds = (behind.get(d.id) ?? [])
      .filter((id) => !excluded.has(id))
      .sort()
      .slice(0, CONVERGENCE_MAX_NODES);
    if (nodeIds.length === 0) continue;
    out.push({
      kind: "converge",
      desiredId: d.id,
      campaignId: convergenceCampaignId(d.id, mine.length + 1),
      nodeIds,
    });
  }
  return out;
}

/**
 * The spec of a convergence campaign: the desired target over exactly `nodeIds`, one batch of
 * 100 % with no minimum duration, no batch threshold (100 %), on breach stop, and the desired
 * version's reconnect timeout, config grace and disruption budget (the pool budget is counted
 * over every campaign, this one included).
 *
 * Its failure budget (`maxFailures`, a count) is what is left of the desired version's burst
 * limit after the `failedSoFar` failures of its earlier convergence campaigns since it was set
 * ({@link convergenceFailures}): `maxFailures - 1 - failedSoFar` failures are tolerated, so
 * the failure that completes the burst breaches the campaign in the decision that judges it,
 * which then offers nothing more — the fleet pass's halt follows, but never after an offer of
 * that decision. One convergence campaign of a desired version runs at a time, so the earlier
 * failures cannot change while it runs.
 *
 * It runs under the guard rails of the campaign that set its desired version
 * (`settings.guardRails`, {@link GUARD_RAILS}): its windows, download budget, gates, batch
 * threshold (100 % when none was carried), and its failure budget, counted over the
 * convergence campaign's own nodes when a percentage, the stricter of it and the burst's rest.
 */
export function convergenceSpec(
  d: DesiredVersion,
  nodeIds: readonly string[],
  failedSoFar: number,
): CampaignSpec {
  const rails = d.settings.guardRails ?? {};
  const burstLeft = Math.max(0, d.settings.maxFailures - 1 - failedSoFar);
  const own =
    rails.maxFailures === undefined
      ? burstLeft
      : failureAllowance(rails.maxFailures, nodeIds.length);
  return {
    targetVersion: d.target.version,
    selector: { labels: {}, pools: [], nodeIds: [...nodeIds] },
    exclude: { nodeIds: [], tags: {} },
    batches: [{ percent: 100, minDurationMs: 0 }],
    concurrency: 0,
    onBreach: "stop",
    reconnectTimeoutMs: d.settings.reconnectTimeoutMs,
    configGraceMs: d.settings.configGraceMs,
    soakMs: 0,
    disruptionBudgetPercent: d.settings.disruptionBudgetPercent,
    reason: `converging to the desired version ${d.id} (${d.target.version})`,
    ...rails,
    failureThresholdPercent: rails.failureThresholdPercent ?? 100,
    maxFailures: { kind: "count", count: Math.min(own, burstLeft) },
  };
}

/** True for the node states a convergence failure counts. */
export function isConvergenceFailure(state: NodeState): boolean {
  return isFailure(state);
}
