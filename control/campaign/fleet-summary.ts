/**
 * The fleet at a glance: nodes by agent version and by pool, and for every desired version
 * how many of the nodes it governs run its target and why the others do not. Pure: the
 * FleetService reads the registry, the desired versions and the convergence campaigns, and
 * this judges them by the same rules convergence plans with (`planConvergence`).
 */
import { assertNever } from "./assert-never.js";
import { type ConvergenceRun, convergenceFailures } from "./convergence-plan.js";
import {
  type DesiredVersion,
  desiredGovernor,
  type FleetNode,
  isAhead,
  notBehindReason,
} from "./desired.js";
import { formatWindow, windowOpen } from "./windows.js";

/** Why a node governed by a desired version does not run its target (most blocking first). */
export type BehindCode =
  | "halted"
  | "failed"
  | "in_campaign"
  | "offline"
  | "upgrade_unsupported"
  | "not_older"
  | "window_closed"
  | "queued";

/** Nodes counted under one key, and how many of them are online. */
export interface FleetCount {
  readonly key: string;
  readonly nodes: number;
  readonly online: number;
  /** Disabled by an administrator. */
  readonly disabled: number;
}

/** Nodes behind for one reason. */
export interface BehindGroup {
  readonly code: BehindCode;
  readonly text: string;
  readonly nodes: number;
  /** The first {@link BEHIND_SAMPLE} of them, by id. */
  readonly nodeIds: readonly string[];
}

/** How far one desired version is from being reached. */
export interface Convergence {
  readonly desired: DesiredVersion;
  readonly state: "converged" | "behind" | "halted";
  /** Nodes it governs, and how many run its target. */
  readonly nodes: number;
  readonly converged: number;
  readonly behind: number;
  /**
   * Nodes it governs that are past its target ({@link isAhead}): neither converged nor behind,
   * never moved back.
   */
  readonly ahead: number;
  /** The first {@link BEHIND_SAMPLE} of them, by id. */
  readonly aheadNodeIds: readonly string[];
  /** One group per reason, most nodes first (ties by code). */
  readonly reasons: readonly BehindGroup[];
  /** Nodes that failed its convergence campaigns since it was set. */
  readonly failedNodeIds: readonly string[];
}

/** What {@link summarizeFleet} finds. */
export interface FleetSummary {
  readonly nodes: number;
  readonly online: number;
  /** Per agent version ("" = not known), most nodes first, ties by version. */
  readonly versions: readonly FleetCount[];
  /** Per pool, by name. */
  readonly pools: readonly FleetCount[];
  /** In the order of `desired` as given. */
  readonly desired: readonly Convergence[];
}

/** At most this many node ids are named per reason. */
export const BEHIND_SAMPLE = 10;

/** The sentence of a reason. */
export function behindText(code: BehindCode, d: DesiredVersion): string {
  switch (code) {
    case "halted":
      return "convergence halted: not offered until the desired version is set again";
    case "failed":
      return `failed a convergence campaign to ${d.target.version} (not offered again until it is set again)`;
    case "in_campaign":
      return "in an unfinished campaign";
    case "offline":
      return "offline: offered when it reconnects";
    case "upgrade_unsupported":
      return "its agent lacks upgrade.v1";
    case "not_older":
      return `runs a version it is never moved back from (not older than ${d.target.version})`;
    case "window_closed":
      return `waits for a maintenance window of the campaign that set it (${(d.settings.guardRails?.windows ?? []).map(formatWindow).join(", ")})`;
    case "queued":
      return "offered by the next convergence pass";
    default:
      return assertNever(code, "behind code");
  }
}

/**
 * Why `node`, governed by `d` and not on its target, is behind (first that applies);
 * `windowShut`: every window of `d`'s guard rails is closed now.
 */
function behindCode(
  node: FleetNode,
  d: DesiredVersion,
  failed: ReadonlySet<string>,
  windowShut: boolean,
): BehindCode {
  if (notBehindReason(node, d.target) !== undefined) return "not_older";
  if (d.haltedAt !== undefined) return "halted";
  if (failed.has(node.id)) return "failed";
  if (node.busy) return "in_campaign";
  if (!node.online) return "offline";
  if (!node.capabilities.includes("upgrade.v1")) return "upgrade_unsupported";
  return windowShut ? "window_closed" : "queued";
}

function countBy(
  fleet: readonly FleetNode[],
  keyOf: (n: FleetNode) => string,
): Map<string, { nodes: number; online: number; disabled: number }> {
  const out = new Map<string, { nodes: number; online: number; disabled: number }>();
  for (const n of fleet) {
    const key = keyOf(n);
    const c = out.get(key) ?? { nodes: 0, online: 0, disabled: 0 };
    c.nodes++;
    if (n.online) c.online++;
    if (!n.enabled) c.disabled++;
    out.set(key, c);
  }
  return out;
}

/**
 * Counts `fleet` by version and pool, and judges each desired version over the nodes it
 * governs ({@link governingDesired}: as every selection, never a disabled node nor one that
 * never connected): a node that runs its target is converged; any other is behind, for the
 * first reason that holds in {@link BehindCode}'s order, unless it is past the target
 * ({@link isAhead}: counted `ahead`, not behind). A desired version is
 * halted while its halt stands, converged when none of its nodes is behind, else behind.
 */
export function summarizeFleet(input: {
  readonly fleet: readonly FleetNode[];
  readonly desired: readonly DesiredVersion[];
  readonly runs: readonly ConvergenceRun[];
  /** Epoch ms, for the desired versions' windows; absent: not judged (never `window_closed`). */
  readonly now?: number | undefined;
}): FleetSummary {
  const byKey = (a: { key: string }, b: { key: string }) =>
    a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
  const versions = [...countBy(input.fleet, (n) => n.agentVersion ?? "")]
    .map(([key, c]) => ({ key, ...c }))
    .sort((a, b) => b.nodes - a.nodes || byKey(a, b));
  const pools = [...countBy(input.fleet, (n) => n.pool)]
    .map(([key, c]) => ({ key, ...c }))
    .sort(byKey);
  const governed = new Map<string, FleetNode[]>();
  const governing = desiredGovernor(input.desired);
  for (const n of input.fleet) {
    const d = governing(n);
    if (d === undefined) continue;
    const list = governed.get(d.id) ?? [];
    list.push(n);
    governed.set(d.id, list);
  }
  const desired = input.desired.map((d): Convergence => {
    const failedNodeIds = [...new Set(convergenceFailures(d, input.runs))].sort();
    const failed = new Set(failedNodeIds);
    const nodes = governed.get(d.id) ?? [];
    const groups = new Map<BehindCode, string[]>();
    const now = input.now;
    const windowShut = now !== undefined && !windowOpen(d.settings.guardRails?.windows, now);
    let converged = 0;
    const ahead: string[] = [];
    for (const n of nodes) {
      if (n.agentVersion === d.target.version) {
        converged++;
        continue;
      }
      if (isAhead(n, d.target)) {
        ahead.push(n.id);
        continue;
      }
      const code = behindCode(n, d, failed, windowShut);
      const ids = groups.get(code) ?? [];
      ids.push(n.id);
      groups.set(code, ids);
    }
    const reasons = [...groups]
      .map(([code, ids]) => ({
        code,
        text: behindText(code, d),
        nodes: ids.length,
        nodeIds: [...ids].sort().slice(0, BEHIND_SAMPLE),
      }))
      .sort((a, b) => b.nodes - a.nodes || (a.code < b.code ? -1 : 1));
    const behind = nodes.length - converged - ahead.length;
    return {
      desired: d,
      state: d.haltedAt !== undefined ? "halted" : behind === 0 ? "converged" : "behind",
      nodes: nodes.length,
      converged,
      behind,
      ahead: ahead.length,
      aheadNodeIds: ahead.sort().slice(0, BEHIND_SAMPLE),
      reasons,
      failedNodeIds,
    };
  });
  return {
    nodes: input.fleet.length,
    online: input.fleet.filter((n) => n.online).length,
    versions,
    pools,
    desired,
  };
}
