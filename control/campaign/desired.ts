/**
 * Desired versions and convergence: what a node of a selector should run, which nodes are
 * behind it, and when Control starts a convergence campaign for them or halts convergence.
 * Pure: the worker reads the rows, the fleet and the convergence campaigns, calls
 * {@link planConvergence}, and starts the campaigns it names through the ordinary campaign
 * machinery (so every campaign rule and invariant applies to them).
 */
import { createHash } from "node:crypto";
import { isFailure, type NodeState, type Target } from "./model.js";
import { type Candidate, selects } from "./plan.js";
import {
  type CampaignSpec,
  DEFAULT_DISRUPTION_BUDGET_PERCENT,
  type Exclude,
  type Selector,
} from "./spec.js";

/** Failures of one desired version's convergence campaigns that halt its convergence. */
export const DEFAULT_CONVERGENCE_MAX_FAILURES = 3;
/** At most this many nodes in one convergence campaign. */
export const CONVERGENCE_MAX_NODES = 1000;
/** The `created_by` of a convergence campaign starts with this, followed by the desired id. */
export const CONVERGENCE_CREATOR = "convergence:";

/** The settings a convergence campaign takes from its desired version. */
export interface ConvergenceSettings {
  readonly reconnectTimeoutMs: number;
  readonly configGraceMs: number;
  readonly disruptionBudgetPercent: number;
  /** Failed nodes (failed, timed_out) of its convergence campaigns that halt convergence. */
  readonly maxFailures: number;
}

/**
 * The version the nodes of a selector should run. One per selector (the id is a function of
 * the selector and its exclusions): recording a newer one for the same selector replaces it.
 */
export interface DesiredVersion {
  readonly id: string;
  readonly selector: Selector;
  readonly exclude: Exclude;
  readonly target: Target;
  /** When it was set (a campaign's completion, or an administrator's set), epoch ms. */
  readonly setAt: number;
  /** Who set it: `campaign:<id>` or the administrator's name. */
  readonly setBy: string;
  readonly settings: ConvergenceSettings;
  /** Set once a burst of failures halted its convergence; cleared by setting it again. */
  readonly haltedAt: number | undefined;
  readonly haltedReason: string | undefined;
}

/** A node of the fleet as convergence sees it. */
export interface FleetNode extends Candidate {
  /** A stream of it is open on some Control now. */
  readonly online: boolean;
  /** The highest release sequence its agent confirmed (it refuses anything below). */
  readonly confirmedSequence: number;
  /** The sequence of the release it runs, when that release is registered here. */
  readonly runningSequence: number | undefined;
  /** It belongs to an unfinished campaign. */
  readonly busy: boolean;
}

/** One convergence campaign of a desired version, as convergence needs it. */
export interface ConvergenceRun {
  readonly campaignId: string;
  readonly desiredId: string;
  readonly createdAt: number;
  readonly finished: boolean;
  /** Its nodes that ended failed or timed_out. */
  readonly failedNodeIds: readonly string[];
}

/** What {@link planConvergence} reads. */
export interface ConvergenceInput {
  readonly desired: readonly DesiredVersion[];
  readonly fleet: readonly FleetNode[];
  /** Every convergence campaign (any desired version, any age). */
  readonly runs: readonly ConvergenceRun[];
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
    };

/** The canonical text of a selector and its exclusions (sorted keys and lists). */
export function selectorKey(selector: Selector, exclude: Exclude): string {
  const sortedRecord = (r: Readonly<Record<string, string>>) =>
    Object.fromEntries(Object.entries(r).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return JSON.stringify({
    labels: sortedRecord(selector.labels),
    pools: [...new Set(selector.pools)].sort(),
    nodeIds: [...new Set(selector.nodeIds)].sort(),
    excludeNodeIds: [...new Set(exclude.nodeIds)].sort(),
    excludeTags: sortedRecord(exclude.tags),
  });
}

/** The id of the desired version of a selector: `d-` and 10 hex digits of its key's SHA-256. */
export function desiredIdOf(selector: Selector, exclude: Exclude): string {
  const hash = createHash("sha256").update(selectorKey(selector, exclude), "utf8").digest("hex");
  return `d-${hash.slice(0, 10)}`;
}

/** The desired version a completed campaign records: its target over its selector. */
export function desiredOfCampaign(input: {
  readonly campaignId: string;
  readonly spec: CampaignSpec;
  readonly target: Target;
  readonly finishedAt: number;
}): DesiredVersion {
  const { spec } = input;
  return {
    id: desiredIdOf(spec.selector, spec.exclude),
    selector: spec.selector,
    exclude: spec.exclude,
    target: input.target,
    setAt: input.finishedAt,
    setBy: `campaign:${input.campaignId}`,
    settings: {
      reconnectTimeoutMs: spec.reconnectTimeoutMs,
      configGraceMs: spec.configGraceMs,
      disruptionBudgetPercent: spec.disruptionBudgetPercent,
      maxFailures: DEFAULT_CONVERGENCE_MAX_FAILURES,
    },
    haltedAt: undefined,
    haltedReason: undefined,
  };
}

/**
 * Whether `next` replaces `current` (the stored desired version of the same selector): a
 * newer setting wins; an older one (a campaign that finished before an administrator's set)
 * changes nothing.
 */
export function replacesDesired(
  current: DesiredVersion | undefined,
  next: DesiredVersion,
): boolean {
  return current === undefined || next.setAt >= current.setAt;
}

/** Default convergence settings for a desired version an administrator sets. */
export function defaultConvergenceSettings(
  reconnectTimeoutMs: number,
  configGraceMs: number,
): ConvergenceSettings {
  return {
    reconnectTimeoutMs,
    configGraceMs,
    disruptionBudgetPercent: DEFAULT_DISRUPTION_BUDGET_PERCENT,
    maxFailures: DEFAULT_CONVERGENCE_MAX_FAILURES,
  };
}

/**
 * The desired version that governs a node: the most recently set one whose selector takes it
 * (a halted one still governs: convergence of that node stops, it does not fall back to an
 * older setting). Undefined when none takes it.
 */
export function governingDesired(
  node: Candidate,
  desired: readonly DesiredVersion[],
): DesiredVersion | undefined {
  let best: DesiredVersion | undefined;
  for (const d of desired) {
    if (!selects({ selector: d.selector, exclude: d.exclude }, node)) continue;
    if (best === undefined || d.setAt > best.setAt || (d.setAt === best.setAt && d.id > best.id))
      best = d;
  }
  return best;
}

/**
 * Why a node is not behind its desired version, or undefined when it is (it runs another
 * version and moving it to the target goes forward). A node is never moved back past its
 * confirmed sequence, nor below the sequence of the release it runs.
 */
export function notBehindReason(node: FleetNode, target: Target): string | undefined {
  if (node.agentVersion === target.version) return "on the target";
  if (node.agentVersion === undefined) return "version unknown";
  if (node.confirmedSequence >= target.sequence)
    return `confirmed sequence ${node.confirmedSequence} is not below ${target.sequence}`;
  if (node.runningSequence !== undefined && node.runningSequence >= target.sequence)
    return `runs sequence ${node.runningSequence}, not below ${target.sequence}`;
  return undefined;
}

/** The failures of a desired version's convergence since it was set, and their nodes. */
export function convergenceFailures(d: DesiredVersion, runs: readonly ConvergenceRun[]): string[] {
  const failed: string[] = [];
  for (const r of runs) {
    if (r.desiredId !== d.id || r.createdAt < d.setAt) continue;
    for (const id of r.failedNodeIds) failed.push(id);
  }
  return failed;
}

/** The id of the `n`-th convergence campaign of a desired version (1-based). */
export function convergenceCampaignId(desiredId: string, n: number): string {
  return `${desiredId}-${n}`;
}

/**
 * What convergence does now, for every desired version:
 * - halted: nothing;
 * - its convergence campaigns since it was set have `maxFailures` or more failed nodes: halt
 *   (the burst of failures), starting nothing;
 * - a convergence campaign of it is unfinished: nothing (one at a time);
 * - else, the nodes it governs that are behind it ({@link notBehindReason}), online, enabled,
 *   upgradable (upgrade.v1), in no unfinished campaign, and not failed by one of its
 *   convergence campaigns since it was set: one convergence campaign over them (at most
 *   {@link CONVERGENCE_MAX_NODES}, in id order), when there is any.
 */
export function planConvergence(input: ConvergenceInput): ConvergenceStep[] {
  const out: ConvergenceStep[] = [];
  const behind = new Map<string, string[]>();
  for (const node of input.fleet) {
    if (!node.online || node.busy || !node.enabled || !node.everConnected) continue;
    if (!node.capabilities.includes("upgrade.v1")) continue;
    const d = governingDesired(node, input.desired);
    if (d === undefined || d.haltedAt !== undefined) continue;
    if (notBehindReason(node, d.target) !== undefined) continue;
    const list = behind.get(d.id) ?? [];
    list.push(node.id);
    behind.set(d.id, list);
  }
  for (const d of input.desired) {
    if (d.haltedAt !== undefined) continue;
    const failed = convergenceFailures(d, input.runs);
    if (failed.length >= d.settings.maxFailures) {
      out.push({
        kind: "halt",
        desiredId: d.id,
        failures: failed.length,
        failedNodeIds: failed,
        message: `convergence to ${d.target.version} halted: ${failed.length} node(s) failed (${failed.slice(0, 10).join(", ")}), the limit is ${d.settings.maxFailures}`,
      });
      continue;
    }
    const mine = input.runs.filter((r) => r.desiredId === d.id);
    if (mine.some((r) => !r.finished)) continue;
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
 * 100 % with no minimum duration, every failure tolerated within the campaign (the desired
 * version's burst limit judges them, across its campaigns), on breach stop, and the desired
 * version's reconnect timeout, config grace and disruption budget (the pool budget is counted
 * over every campaign, this one included).
 */
export function convergenceSpec(d: DesiredVersion, nodeIds: readonly string[]): CampaignSpec {
  return {
    targetVersion: d.target.version,
    selector: { labels: {}, pools: [], nodeIds: [...nodeIds] },
    exclude: { nodeIds: [], tags: {} },
    batches: [{ percent: 100, minDurationMs: 0 }],
    failureThresholdPercent: 100,
    concurrency: 0,
    onBreach: "stop",
    reconnectTimeoutMs: d.settings.reconnectTimeoutMs,
    configGraceMs: d.settings.configGraceMs,
    soakMs: 0,
    disruptionBudgetPercent: d.settings.disruptionBudgetPercent,
    reason: `converging to the desired version ${d.id} (${d.target.version})`,
  };
}

/** True for the node states a convergence failure counts. */
export function isConvergenceFailure(state: NodeState): boolean {
  return isFailure(state);
}
