/**
 * Conversions between the admin API's campaign messages and the engine's records: campaigns,
 * batches with per-state counts and elapsed time (paused time excluded), plans and node rows
 * out. Specs, in and out, are `campaign-spec-convert.ts`'s.
 */
import { create } from "@bufbuild/protobuf";
import { durationFromMs, timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  BatchState as BatchStateEnum,
  type BatchStatus,
  BatchStatusSchema,
  type Campaign,
  type CampaignNode as CampaignNodeMessage,
  CampaignNodeSchema,
  CampaignPhase as CampaignPhaseEnum,
  CampaignSchema,
  type NodeStateCount,
  NodeState as NodeStateEnum,
  type PlanCampaignResponse,
  PlanCampaignResponseSchema,
} from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import {
  type BatchState,
  type CampaignEstimate,
  type CampaignNode,
  type CampaignPhase,
  type CampaignSpec,
  type CampaignState,
  countedMs,
  isFailure,
  NODE_STATES,
  type NodeState,
  type Plan,
} from "../campaign/index.js";
import { ControlError } from "../errors.js";
import { specToProto } from "./campaign-spec-convert.js";
import { estimateBounds } from "./plan-estimate-bounds.js";

const ts = (epochMs: number | undefined) =>
  epochMs === undefined ? undefined : timestampFromDate(new Date(epochMs));

/** The proto enum value of an engine phase. */
export function phaseToProto(phase: CampaignPhase): CampaignPhaseEnum {
  return CampaignPhaseEnum[phase.toUpperCase() as keyof typeof CampaignPhaseEnum];
}

/** The engine phase of a proto enum value; throws invalid_argument for UNSPECIFIED/unknown. */
export function phaseFromProto(phase: CampaignPhaseEnum): CampaignPhase {
  const name = CampaignPhaseEnum[phase];
  if (name === undefined || phase === CampaignPhaseEnum.UNSPECIFIED) {
    throw new ControlError("invalid_argument", `unknown campaign phase ${phase}`, {
      field: "phases",
    });
  }
  return name.toLowerCase() as CampaignPhase;
}

/** The proto enum value of an engine node state. */
export function nodeStateToProto(state: NodeState): NodeStateEnum {
  return NodeStateEnum[state.toUpperCase() as keyof typeof NodeStateEnum];
}

/** The engine node state of a proto enum value; throws invalid_argument for UNSPECIFIED/unknown. */
export function nodeStateFromProto(state: NodeStateEnum): NodeState {
  const name = NodeStateEnum[state];
  if (name === undefined || state === NodeStateEnum.UNSPECIFIED) {
    throw new ControlError("invalid_argument", `unknown node state ${state}`, {
      field: "states",
    });
  }
  return name.toLowerCase() as NodeState;
}

function batchStateToProto(state: BatchState): BatchStateEnum {
  return BatchStateEnum[state.toUpperCase() as keyof typeof BatchStateEnum];
}

/** Why a plan skips a node an administrator revoked. */
const REVOKED_SKIP_MESSAGE = "revoked by an administrator: it cannot connect before `node reset`";

/**
 * The Plan answer, with its duration estimate when given (`estimate.ts`) and, given the
 * resolved `spec`, each batch's tolerated failures (floor of the threshold's share of its nodes
 * not skipped, as the breach rule counts them) and what bounds the estimate
 * (`plan-estimate-bounds.ts`). The `revoked` nodes of the plan (not skipped otherwise) are
 * a skipped group of their own, code node_revoked, out of the tolerated failures' count.
 */
export function planToProto(
  plan: Plan,
  estimate?: CampaignEstimate,
  plannedAt?: number,
  yankedPrevious: readonly string[] = [],
  spec?: CampaignSpec,
  revoked: readonly string[] = [],
): PlanCampaignResponse {
  const finite = (ms: number | undefined) =>
    ms !== undefined && Number.isFinite(ms) ? timestampFromDate(new Date(ms)) : undefined;
  const skipped = new Set(plan.skips.flatMap((k) => k.nodeIds));
  for (const id of plan.unsupportedNodeIds) skipped.add(id);
  // A revoked node is skipped node_revoked at its batch's start (`offer.ts`), whatever else.
  const revokedSkip = revoked.filter((id) => !skipped.has(id));
  for (const id of revokedSkip) skipped.add(id);
  const tolerated = (nodeIds: readonly string[]): number => {
    if (spec === undefined) return 0;
    const offerable = nodeIds.filter((id) => !skipped.has(id)).length;
    return Math.floor((spec.failureThresholdPercent * offerable) / 100);
  };
  return create(PlanCampaignResponseSchema, {
    batches: plan.batches.map((b, i) => {
      const e = estimate?.batches[i];
      return {
        index: b.index,
        percent: b.percent,
        minDuration: durationFromMs(b.minDurationMs),
        nodeIds: [...b.nodeIds],
        toleratedFailures: tolerated(b.nodeIds),
        ...(e === undefined
          ? {}
          : {
              rounds: e.rounds,
              shortest: durationFromMs(e.minMs),
              longest: durationFromMs(e.maxMs),
            }),
      };
    }),
    totalNodes: plan.totalNodes,
    unsupportedNodeIds: [...plan.unsupportedNodeIds],
    upToDateNodeIds: [...plan.upToDateNodeIds],
    skipped: [
      ...plan.skips.map((k) => ({ code: k.code, message: k.message, nodeIds: [...k.nodeIds] })),
      ...(revokedSkip.length === 0
        ? []
        : [{ code: "node_revoked", message: REVOKED_SKIP_MESSAGE, nodeIds: revokedSkip }]),
    ],
    yankedPreviousNodeIds: [...yankedPrevious],
    earliestEnd: finite(estimate?.earliestEndAt),
    latestEnd: finite(estimate?.latestEndAt),
    plannedAt: finite(plannedAt),
    estimateBounds:
      spec === undefined || estimate === undefined ? [] : estimateBounds(spec, plan, estimate),
  });
}

/** Node counts per state: of a whole campaign, and per batch. */
export interface StateCounts {
  readonly total: Map<NodeState, number>;
  readonly byBatch: Map<number, Map<NodeState, number>>;
}

/** Counts nodes per state, overall and per batch. */
export function countStates(
  rows: Iterable<{ batch: number; state: NodeState; count: number }>,
): StateCounts {
  const total = new Map<NodeState, number>();
  const byBatch = new Map<number, Map<NodeState, number>>();
  for (const r of rows) {
    total.set(r.state, (total.get(r.state) ?? 0) + r.count);
    let b = byBatch.get(r.batch);
    if (!b) {
      b = new Map();
      byBatch.set(r.batch, b);
    }
    b.set(r.state, (b.get(r.state) ?? 0) + r.count);
  }
  return { total, byBatch };
}

/** Counts of the given node records. */
export function countNodes(nodes: readonly CampaignNode[]): StateCounts {
  return countStates(nodes.map((n) => ({ batch: n.batch, state: n.state, count: 1 })));
}

function countList(counts: Map<NodeState, number> | undefined): NodeStateCount[] {
  return NODE_STATES.filter((s) => (counts?.get(s) ?? 0) > 0).map(
    (s) => ({ state: nodeStateToProto(s), count: counts?.get(s) ?? 0 }) as NodeStateCount,
  );
}

/**
 * Time a batch has run: from its start to its end (or `now`), minus closed pauses and, for the
 * current batch of a paused campaign, the open pause, and the time outside the campaign's
 * maintenance windows (what counts toward its minimum duration, as `countedMs`).
 */
export function batchElapsedMs(c: CampaignState, index: number, now: number): number {
  const b = c.batches[index];
  if (!b || b.startedAt === undefined) return 0;
  const openPause = index === c.currentBatch && b.endedAt === undefined ? c.pausedAt : undefined;
  return countedMs(b, openPause, now, c.spec.windows);
}

/** Row facts of a campaign the record itself does not hold. */
export interface CampaignMeta {
  readonly createdBy: string;
  readonly updatedAt: Date;
}

/** A campaign message with its batches and counts. */
export function campaignToProto(
  c: CampaignState,
  meta: CampaignMeta,
  counts: StateCounts,
  now: number,
): Campaign {
  const batches: BatchStatus[] = c.batches.map((b) => {
    const per = counts.byBatch.get(b.index);
    let failed = 0;
    let skipped = 0;
    for (const [state, n] of per ?? []) {
      if (isFailure(state)) failed += n;
      if (state === "skipped") skipped += n;
    }
    return create(BatchStatusSchema, {
      index: b.index,
      percent: b.percent,
      state: batchStateToProto(b.state),
      nodeCount: b.nodeCount,
      counts: countList(per),
      minDuration: durationFromMs(b.minDurationMs),
      startedAt: ts(b.startedAt),
      endedAt: ts(b.endedAt),
      elapsed: durationFromMs(batchElapsedMs(c, b.index, now)),
      failed,
      offerable: b.nodeCount - skipped,
      acceptedFailures: b.acceptedFailures ?? 0,
    });
  });
  let nodeCount = 0;
  for (const n of counts.total.values()) nodeCount += n;
  return create(CampaignSchema, {
    id: c.id,
    spec: specToProto(c.spec),
    phase: phaseToProto(c.phase),
    targetSequence: BigInt(c.targetSequence),
    currentBatch: c.currentBatch,
    batches,
    createdAt: timestampFromDate(new Date(c.createdAt)),
    updatedAt: timestampFromDate(meta.updatedAt),
    finishedAt: ts(c.finishedAt),
    code: c.code ?? "",
    message: c.message ?? "",
    stoppedByNodeId: c.stoppedByNodeId ?? "",
    createdBy: meta.createdBy,
    retryOf: c.retryOf ?? "",
    nodeCount,
    counts: countList(counts.total),
  });
}

/** One node row of GetCampaign; its operation id is the latest operation it was sent. */
export function campaignNodeToProto(n: CampaignNode): CampaignNodeMessage {
  return create(CampaignNodeSchema, {
    nodeId: n.nodeId,
    batch: n.batch,
    order: n.order,
    state: nodeStateToProto(n.state),
    code: n.code ?? "",
    message: n.message ?? "",
    previousVersion: n.previousVersion ?? "",
    version: n.version ?? "",
    pool: n.pool,
    operationId: n.rollbackOperationId ?? n.confirmOperationId ?? n.upgradeOperationId ?? "",
    offeredAt: ts(n.offeredAt),
    finishedAt: ts(n.finishedAt),
    updatedAt: timestampFromDate(new Date(n.stateChangedAt)),
    rollbackResult: n.rollbackResult ?? "",
    deferredAt: ts(n.deferredAt),
  });
}
