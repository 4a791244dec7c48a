/**
 * Planning: which nodes a campaign takes, in which canary order, in which batches.
 * Pure and deterministic: canary order is a keyed hash (HMAC-SHA-256) of the node id under the
 * fleet's canary-order secret, so it is stable across campaigns and Controls of one fleet but
 * cannot be steered by whoever chooses a node's id without knowing the secret.
 */
import { createHmac } from "node:crypto";
import { CAP_UPGRADE } from "./model.js";
import { rampSizes } from "./ramp.js";
import { type BatchSpec, type CampaignSpec, DEFAULT_POLICY } from "./spec.js";

/** A node as the store knows it, before any campaign. */
export interface Candidate {
  readonly id: string;
  readonly labels: Readonly<Record<string, string>>;
  /** "" when the node belongs to no pool. */
  readonly pool: string;
  readonly enabled: boolean;
  /** Has it ever completed a Hello? */
  readonly everConnected: boolean;
  /** Its last negotiated capabilities. */
  readonly capabilities: readonly string[];
  /** Its last reported agent version, if any. */
  readonly agentVersion: string | undefined;
  /** Its platform as its last Hello said (`linux-amd64`); absent or "": not known. */
  readonly platform?: string | undefined;
  /**
   * The highest release sequence its agent confirmed (it refuses anything below); absent: not
   * known here (not judged).
   */
  readonly confirmedSequence?: number | undefined;
}

/** Why a planned node will be skipped without an offer. */
export type SkipCode = "upgrade_unsupported" | "platform_unsupported" | "ahead_of_target";

/** Planned nodes that will be skipped for one reason: the code, a sentence, the nodes. */
export interface PlanSkip {
  readonly code: SkipCode;
  /** Says why, e.g. "release 2.0.0 has no artifact for linux-arm64". */
  readonly message: string;
  readonly nodeIds: readonly string[];
}

/** One planned batch: its nodes in canary order (possibly none, see {@link batchBounds}). */
export interface PlannedBatch {
  readonly index: number;
  readonly percent: number;
  readonly minDurationMs: number;
  readonly nodeIds: readonly string[];
}

/** A campaign's plan (the `PlanCampaign` answer). */
export interface Plan {
  readonly batches: readonly PlannedBatch[];
  /** Every node in canary order. */
  readonly nodes: readonly PlannedNode[];
  readonly totalNodes: number;
  /** Nodes lacking upgrade.v1: they will be skipped (`upgrade_unsupported`). */
  readonly unsupportedNodeIds: readonly string[];
  /** Nodes already on the target: they succeed at once (`already_current`). */
  readonly upToDateNodeIds: readonly string[];
  /**
   * Nodes (with upgrade.v1, not on the target) of a known platform the release carries no
   * artifact for: they start `skipped` (`platform_unsupported`), never offered, never failures.
   */
  readonly platformUnsupportedNodeIds: readonly string[];
  /**
   * Nodes (with upgrade.v1, not on the target, of a platform it carries) whose agent confirmed
   * a higher sequence than the release's: they would refuse it, so they start `skipped`
   * (`ahead_of_target`), never offered, never failures.
   */
  readonly aheadOfTargetNodeIds: readonly string[];
  /** Every node that will be skipped without an offer, grouped by code and reason. */
  readonly skips: readonly PlanSkip[];
  /** Nodes that will actually be offered the upgrade; 0 means "no node can be upgraded". */
  readonly upgradableCount: number;
}

/** What a plan needs to know of the target release beyond its version. */
export interface PlanRelease {
  /** The platforms it carries an artifact for; undefined: not known (nobody is judged on it). */
  readonly platforms: readonly string[] | undefined;
  /** Its sequence; absent: not known (nobody is judged `ahead_of_target`). */
  readonly sequence?: number | undefined;
}

/** One node of a plan. */
export interface PlannedNode {
  readonly nodeId: string;
  readonly batch: number;
  readonly order: number;
  readonly pool: string;
}

/**
 * The canary-order secret of the memory store, the simulation and tests: public, so it must
 * never order a real fleet (a fleet on PostgreSQL uses the random secret its database holds,
 * `FleetTransaction.readOrderSecret`).
 */
export const FIXED_ORDER_SECRET =
  "agent-control fixed canary-order secret (memory store, simulation)";

/**
 * A node's place in canary order: the hex HMAC-SHA-256 of its id (UTF-8) keyed with the
 * fleet's canary-order secret (UTF-8). The same in every campaign of the fleet; without the
 * secret, an id cannot be chosen to come early.
 */
export function orderKey(nodeId: string, secret: string): string {
  return createHmac("sha256", secret).update(nodeId, "utf8").digest("hex");
}

/** True when the node carries the label pair canary=true. */
export function isCanary(labels: Readonly<Record<string, string>>): boolean {
  return labels.canary === "true";
}

/**
 * True when the spec's selector takes the candidate and its exclusions do not: every selector
 * label pair present, pool among `pools` (when given), id among `nodeIds` (when given); not an
 * excluded id, and carrying none of the excluded label pairs. Enabled and ever-connected nodes only.
 * For one candidate; over many, build the test once with {@link selection}.
 */
export function selects(
  spec: Pick<CampaignSpec, "selector" | "exclude">,
  node: Candidate,
): boolean {
  return selection(spec)(node);
}

/**
 * The test of {@link selects} for one spec, built once: its pools and node ids (included and
 * excluded) as sets, so judging a candidate costs the same whatever the lists' lengths (a
 * retry's selector lists every node it retries).
 */
export function selection(
  spec: Pick<CampaignSpec, "selector" | "exclude">,
): (node: Candidate) => boolean {
  const { selector, exclude } = spec;
  const labels = Object.entries(selector.labels);
  const pools = selector.pools.length > 0 ? new Set(selector.pools) : undefined;
  const ids = selector.nodeIds.length > 0 ? new Set(selector.nodeIds) : undefined;
  const excluded = new Set(exclude.nodeIds);
  const tags = Object.entries(exclude.tags);
  return (node) => {
    if (!node.enabled || !node.everConnected) return false;
    for (const [k, v] of labels) if (node.labels[k] !== v) return false;
    if (pools !== undefined && !pools.has(node.pool)) return false;
    if (ids !== undefined && !ids.has(node.id)) return false;
    if (excluded.has(node.id)) return false;
    for (const [k, v] of tags) if (node.labels[k] === v) return false;
    return true;
  };
}

/**
 * Sorts nodes into canary order: `canary=true` first, then by ascending {@link orderKey} under
 * `secret` (ties, impossible in practice, by id). Returns a new array.
 */
export function canaryOrder<
  T extends { readonly id: string; readonly labels: Readonly<Record<string, string>> },
>(nodes: readonly T[], secret: string): T[] {
  const keyed = nodes.map((n) => ({
    n,
    canary: isCanary(n.labels) ? 0 : 1,
    key: orderKey(n.id, secret),
  }));
  keyed.sort(
    (a, b) =>
      a.canary - b.canary ||
      (a.key < b.key ? -1 : a.key > b.key ? 1 : 0) ||
      (a.n.id < b.n.id ? -1 : a.n.id > b.n.id ? 1 : 0),
  );
  return keyed.map((k) => k.n);
}

/**
 * Cumulative end index of each batch: `ceil(total × percent / 100)`, capped at total, so the
 * canary batch has at least one node when there is any. Batch i takes [bounds[i-1], bounds[i]).
 * When rounding makes two cumulative counts equal, the later batch is EMPTY; it is kept so batch
 * indexes match the spec, and the engine passes an empty batch at once (no minimum duration).
 */
export function batchBounds(total: number, batches: readonly BatchSpec[]): number[] {
  let prev = 0;
  return batches.map((b) => {
    const end = Math.min(total, Math.max(prev, Math.ceil((total * b.percent) / 100)));
    prev = end;
    return end;
  });
}

/**
 * The batches of a ramp for `total` nodes: one per step (`rampSizes`), each lasting the step,
 * its percent the cumulative share rounded up (for display; never above 100).
 */
function rampBatches(
  spec: CampaignSpec,
  total: number,
  firstBatchMaxPercent: number,
): { specs: BatchSpec[]; bounds: number[] } {
  const ramp = spec.ramp;
  if (ramp === undefined) return { specs: [...spec.batches], bounds: [] };
  const bounds: number[] = [];
  const specs: BatchSpec[] = [];
  let end = 0;
  for (const size of rampSizes(total, ramp, firstBatchMaxPercent)) {
    end += size;
    bounds.push(end);
    specs.push({ percent: Math.ceil((end * 100) / total), minDurationMs: ramp.stepMs });
  }
  return { specs, bounds };
}

/**
 * Plans a campaign over the candidates (the spec must be valid: {@link validateSpec}).
 * Unsupported, up-to-date and ahead-of-target nodes keep their place in the order and in their
 * batch; they are also listed apart because they are settled without an offer. With a ramp, each step is
 * a batch (`ramp.ts`); its first step holds at most `firstBatchMaxPercent` of the nodes. With
 * `minCanaries`, the first batch is widened to hold that many nodes that would be offered.
 * Canary order is keyed with `orderSecret`: Control passes its fleet's secret (admission
 * requires it); the default, {@link FIXED_ORDER_SECRET}, is for the memory store and tests.
 */
export function planCampaign(
  spec: CampaignSpec,
  candidates: readonly Candidate[],
  firstBatchMaxPercent: number = DEFAULT_POLICY.firstBatchMaxPercent,
  release: PlanRelease = { platforms: undefined },
  orderSecret: string = FIXED_ORDER_SECRET,
): Plan {
  const selected = selection(spec);
  const ordered = canaryOrder(
    candidates.filter((c) => selected(c)),
    orderSecret,
  );
  const ramped =
    spec.ramp === undefined ? undefined : rampBatches(spec, ordered.length, firstBatchMaxPercent);
  const specs = ramped?.specs ?? spec.batches;
  const bounds = widenCanaryBatch(
    ramped?.bounds ?? batchBounds(ordered.length, spec.batches),
    ordered,
    spec,
    release,
  );
  const batches: PlannedBatch[] = [];
  const nodes: PlannedNode[] = [];
  let start = 0;
  specs.forEach((b, index) => {
    const end = bounds[index] ?? start;
    const slice = ordered.slice(start, end);
    slice.forEach((c, i) => {
      nodes.push({ nodeId: c.id, batch: index, order: start + i, pool: c.pool });
    });
    batches.push({
      index,
      percent: b.percent,
      minDurationMs: b.minDurationMs,
      nodeIds: slice.map((c) => c.id),
    });
    start = end;
  });
  const upToDate = ordered.filter((c) => c.agentVersion === spec.targetVersion);
  const unsupported = ordered.filter(
    (c) => c.agentVersion !== spec.targetVersion && !c.capabilities.includes(CAP_UPGRADE),
  );
  const platforms = release.platforms;
  const wrongPlatform =
    platforms === undefined
      ? []
      : ordered.filter(
          (c) =>
            c.agentVersion !== spec.targetVersion &&
            c.capabilities.includes(CAP_UPGRADE) &&
            c.platform !== undefined &&
            c.platform !== "" &&
            !platforms.includes(c.platform),
        );
  const sequence = release.sequence;
  const ahead =
    sequence === undefined
      ? []
      : ordered.filter(
          (c) => upgradable(c, spec.targetVersion, platforms) && isAheadOf(c, sequence),
        );
  const skips: PlanSkip[] = [];
  if (unsupported.length > 0) {
    skips.push({
      code: "upgrade_unsupported",
      message: `the agent did not negotiate ${CAP_UPGRADE}`,
      nodeIds: unsupported.map((c) => c.id),
    });
  }
  const byPlatform = new Map<string, string[]>();
  for (const c of wrongPlatform) {
    const p = c.platform as string;
    const ids = byPlatform.get(p);
    if (ids === undefined) byPlatform.set(p, [c.id]);
    else ids.push(c.id);
  }
  for (const [platform, nodeIds] of [...byPlatform].sort(([a], [b]) => (a < b ? -1 : 1))) {
    skips.push({
      code: "platform_unsupported",
      message: platformUnsupportedMessage(spec.targetVersion, platform),
      nodeIds,
    });
  }
  if (ahead.length > 0 && sequence !== undefined) {
    skips.push({
      code: "ahead_of_target",
      message: aheadOfTargetMessage(spec.targetVersion, sequence),
      nodeIds: ahead.map((c) => c.id),
    });
  }
  return {
    batches,
    nodes,
    totalNodes: ordered.length,
    unsupportedNodeIds: unsupported.map((c) => c.id),
    upToDateNodeIds: upToDate.map((c) => c.id),
    platformUnsupportedNodeIds: wrongPlatform.map((c) => c.id),
    aheadOfTargetNodeIds: ahead.map((c) => c.id),
    skips,
    upgradableCount:
      ordered.length - upToDate.length - unsupported.length - wrongPlatform.length - ahead.length,
  };
}

/**
 * True when a selected node is neither on the target, nor without upgrade.v1, nor of a known
 * platform the release lacks (it may still be ahead of it: {@link isAheadOf}).
 */
function upgradable(c: Candidate, version: string, platforms: readonly string[] | undefined) {
  if (c.agentVersion === version || !c.capabilities.includes(CAP_UPGRADE)) return false;
  return platforms === undefined || !c.platform || platforms.includes(c.platform);
}

/** True when the node's agent confirmed a sequence above `sequence` (it would refuse it). */
function isAheadOf(c: Candidate, sequence: number): boolean {
  return c.confirmedSequence !== undefined && c.confirmedSequence > sequence;
}

/**
 * With `--min-canaries N`, the first batch ends no earlier than just after the N-th node in
 * canary order that would be offered the upgrade (all of them when fewer), whatever its share;
 * later batches start no earlier. Without it, the bounds as given.
 */
function widenCanaryBatch(
  bounds: number[],
  ordered: readonly Candidate[],
  spec: CampaignSpec,
  release: PlanRelease,
): number[] {
  const min = spec.minCanaries;
  if (min === undefined || bounds.length === 0) return bounds;
  let end = 0;
  let found = 0;
  while (end < ordered.length && found < min) {
    const c = ordered[end] as Candidate;
    const offered =
      upgradable(c, spec.targetVersion, release.platforms) &&
      (release.sequence === undefined || !isAheadOf(c, release.sequence));
    if (offered) found++;
    end++;
  }
  let prev = 0;
  return bounds.map((b, i) => {
    prev = Math.max(prev, i === 0 ? Math.max(b, end) : b);
    return prev;
  });
}

/**
 * The reason a node is skipped `ahead_of_target` by a campaign to `version` at `sequence`: its
 * agent confirmed a higher sequence.
 */
export function aheadOfTargetMessage(version: string, sequence: number): string {
  return `the agent confirmed a sequence above ${sequence} (release ${version}): it refuses anything below`;
}

/** The reason a node of `platform` is skipped `platform_unsupported` by a campaign to `version`. */
export function platformUnsupportedMessage(version: string, platform: string): string {
  return `release ${version} has no artifact for ${platform}`;
}
