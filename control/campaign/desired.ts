/**
 * Desired versions: what a node of a selector should run, which desired version governs it,
 * and whether it is behind it. Pure; `convergence-plan.ts` decides from these when Control
 * starts a convergence campaign or halts convergence.
 */
import { createHash } from "node:crypto";
import { compareSemver, isSemver } from "../shared/release/semver.js";
import type { Target } from "./model.js";
import { type Candidate, selection } from "./plan.js";
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

/**
 * The guard rails of a campaign beyond its reconnect timeout, config grace and pool budget
 * (which {@link ConvergenceSettings} holds for every desired version): when it may offer
 * (`windows`), how many of its nodes may download at once, its batch threshold, its failure
 * budget over every batch, and its outside health gates with their grace. The one list of
 * them: {@link guardRailsOf} picks these fields from a spec, `convergenceSpec` lays them over
 * a convergence campaign's spec, so a field added here is carried end to end. The minimum
 * sample (`minCanaries`) is not among them: it sizes a rollout's canary batch, and a
 * convergence campaign over one late node would be refused for want of canaries.
 */
export const GUARD_RAILS = [
  "windows",
  "maxDownloads",
  "failureThresholdPercent",
  "maxFailures",
  "gates",
  "gateGraceMs",
] as const satisfies readonly (keyof CampaignSpec)[];

/** A campaign's guard rails ({@link GUARD_RAILS}), as its spec holds them; absent: none. */
export type GuardRails = Partial<Pick<CampaignSpec, (typeof GUARD_RAILS)[number]>>;

/** The guard rails of `spec` ({@link GUARD_RAILS}): each field it sets, and no other. */
export function guardRailsOf(spec: CampaignSpec): GuardRails {
  const out: Record<string, unknown> = {};
  for (const key of GUARD_RAILS) if (spec[key] !== undefined) out[key] = spec[key];
  return out as GuardRails;
}

/** The settings a convergence campaign takes from its desired version. */
export interface ConvergenceSettings {
  readonly reconnectTimeoutMs: number;
  readonly configGraceMs: number;
  readonly disruptionBudgetPercent: number;
  /** Failed nodes (failed, timed_out) of its convergence campaigns that halt convergence. */
  readonly maxFailures: number;
  /**
   * The guard rails of the campaign that set it, every convergence campaign of it runs under
   * them; absent: set by an administrator over a selector that had none, or recorded before
   * desired versions carried them.
   */
  readonly guardRails?: GuardRails | undefined;
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

/**
 * The desired version a completed campaign records: its target over its selector (for a
 * retry, `selection`: the selector and exclusions of the campaign it retried, first of its
 * chain, never the retry's own list of node ids), with the campaign's settings and guard
 * rails ({@link guardRailsOf}).
 */
export function desiredOfCampaign(input: {
  readonly campaignId: string;
  readonly spec: CampaignSpec;
  readonly target: Target;
  readonly finishedAt: number;
  readonly selection?: Pick<CampaignSpec, "selector" | "exclude"> | undefined;
}): DesiredVersion {
  const { spec } = input;
  const { selector, exclude } = input.selection ?? spec;
  return {
    id: desiredIdOf(selector, exclude),
    selector,
    exclude,
    target: input.target,
    setAt: input.finishedAt,
    setBy: `campaign:${input.campaignId}`,
    settings: {
      reconnectTimeoutMs: spec.reconnectTimeoutMs,
      configGraceMs: spec.configGraceMs,
      disruptionBudgetPercent: spec.disruptionBudgetPercent,
      maxFailures: DEFAULT_CONVERGENCE_MAX_FAILURES,
      guardRails: guardRailsOf(spec),
    },
    haltedAt: undefined,
    haltedReason: undefined,
  };
}

/**
 * Whether `next`, the desired version a completed campaign records, replaces `current` (the
 * stored desired version of the same selector): a newer setting wins, but never one that lowers
 * the target's sequence. An older setting (a campaign that finished before an administrator's
 * set) changes nothing, and neither does an older release that completes after a newer one was
 * set (the release channel never moves back). Only an administrator's explicit set, which does
 * not pass here, may lower it.
 */
export function replacesDesired(
  current: DesiredVersion | undefined,
  next: DesiredVersion,
): boolean {
  return (
    current === undefined ||
    (next.setAt >= current.setAt && next.target.sequence >= current.target.sequence)
  );
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
 * older setting). Undefined when none takes it. For one node; over a fleet, build the lookup
 * once with {@link desiredGovernor}.
 */
export function governingDesired(
  node: Candidate,
  desired: readonly DesiredVersion[],
): DesiredVersion | undefined {
  return desiredGovernor(desired)(node);
}

/**
 * {@link governingDesired} for many nodes: each desired version's selection is built once
 * (`selection`: sets of its pools and ids), so a node costs the number of desired versions,
 * never the length of their node lists.
 */
export function desiredGovernor(
  desired: readonly DesiredVersion[],
): (node: Candidate) => DesiredVersion | undefined {
  const newestFirst = [...desired].sort(
    (a, b) => b.setAt - a.setAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0),
  );
  const tests = newestFirst.map((d) => ({
    d,
    takes: selection({ selector: d.selector, exclude: d.exclude }),
  }));
  return (node) => tests.find((t) => t.takes(node))?.d;
}

/**
 * True when the node is past the target, so never behind it: it confirmed a higher sequence
 * (it refuses the target), runs a registered release of a higher sequence, or, running a
 * release not registered here, a version of higher SemVer precedence. Convergence leaves it
 * alone ({@link notBehindReason}); the fleet summary and `desired list` count it `ahead`,
 * neither converged nor behind, so a desired version whose other nodes run its target is
 * converged.
 */
export function isAhead(
  node: Pick<FleetNode, "agentVersion" | "confirmedSequence" | "runningSequence">,
  target: Target,
): boolean {
  const running = node.agentVersion;
  if (running === undefined || running === target.version) return false;
  if (node.confirmedSequence > target.sequence) return true;
  if (node.runningSequence !== undefined) return node.runningSequence > target.sequence;
  return (
    isSemver(running) && isSemver(target.version) && compareSemver(running, target.version) > 0
  );
}

/**
 * Why a node is not behind its desired version, or undefined when it is (moving it to the
 * target goes forward by every measure known). A node is never moved back: not past its
 * confirmed sequence, not below the sequence of the release it runs, and not to a target whose
 * version (SemVer precedence) is not above the one it runs, registered or not. A node whose
 * version is neither a registered release nor SemVer cannot be compared and is left alone.
 */
export function notBehindReason(node: FleetNode, target: Target): string | undefined {
  const running = node.agentVersion;
  if (running === target.version) return "on the target";
  if (running === undefined) return "version unknown";
  if (node.confirmedSequence >= target.sequence)
    return `confirmed sequence ${node.confirmedSequence} is not below ${target.sequence}`;
  if (node.runningSequence !== undefined && node.runningSequence >= target.sequence)
    return `runs sequence ${node.runningSequence}, not below ${target.sequence}`;
  if (isSemver(running) && isSemver(target.version)) {
    if (compareSemver(running, target.version) >= 0)
      return `runs ${running}, not older than ${target.version}`;
  } else if (node.runningSequence === undefined) {
    return `runs ${running}, which is neither a registered release nor a version comparable with ${target.version}`;
  }
  return undefined;
}
