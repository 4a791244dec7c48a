import type { BatchRecord, CampaignNode, CampaignState, Target } from "./model.js";
import type { Plan } from "./plan.js";
import type { CampaignSpec } from "./spec.js";

/** The skip codes a node is created with (the engine skips `upgrade_unsupported` itself). */
type CreatedSkip = "platform_unsupported" | "ahead_of_target";

/** What a start needs. */
export interface CreateCampaignInput {
  readonly id: string;
  readonly spec: CampaignSpec;
  readonly plan: Plan;
  readonly target: Target;
  readonly now: number;
  readonly retryOf?: string | undefined;
}

/**
 * The initial state of a campaign from its plan: phase running, batch 0 running from `now`,
 * every other batch pending, every node waiting except those the plan skips
 * `platform_unsupported` or `ahead_of_target` (skipped and final from `now`: never offered,
 * never a failure). Persist both in the start transaction, then
 * call `decide` (it makes the first offers).
 */
export function createCampaign(input: CreateCampaignInput): {
  campaign: CampaignState;
  nodes: CampaignNode[];
} {
  const { plan, now } = input;
  const batches: BatchRecord[] = plan.batches.map((b) => ({
    index: b.index,
    percent: b.percent,
    minDurationMs: b.minDurationMs,
    nodeCount: b.nodeIds.length,
    state: b.index === 0 ? "running" : "pending",
    startedAt: b.index === 0 ? now : undefined,
    pausedMs: 0,
    settledAt: undefined,
    endedAt: undefined,
    acceptedFailures: 0,
  }));
  const campaign: CampaignState = {
    id: input.id,
    spec: input.spec,
    targetSequence: input.target.sequence,
    phase: "running",
    currentBatch: 0,
    batches,
    createdAt: now,
    pausedAt: undefined,
    code: undefined,
    message: undefined,
    stoppedByNodeId: undefined,
    rollbackCause: undefined,
    finishedAt: undefined,
    retryOf: input.retryOf,
  };
  const skippedAtStart = new Map<string, { code: CreatedSkip; message: string }>();
  for (const skip of plan.skips) {
    if (skip.code !== "platform_unsupported" && skip.code !== "ahead_of_target") continue;
    for (const id of skip.nodeIds)
      skippedAtStart.set(id, { code: skip.code, message: skip.message });
  }
  const nodes = plan.nodes.map((n) => {
    const node = newNode(n.nodeId, n.batch, n.order, n.pool, now);
    const skip = skippedAtStart.get(n.nodeId);
    return skip === undefined
      ? node
      : {
          ...node,
          state: "skipped" as const,
          code: skip.code,
          message: skip.message,
          finishedAt: now,
        };
  });
  return { campaign, nodes };
}

/** A waiting node record with nothing else known. */
export function newNode(
  nodeId: string,
  batch: number,
  order: number,
  pool: string,
  now: number,
): CampaignNode {
  return {
    nodeId,
    batch,
    order,
    pool,
    state: "waiting",
    code: undefined,
    message: undefined,
    previousVersion: undefined,
    version: undefined,
    upgradeOperationId: undefined,
    rollbackOperationId: undefined,
    confirmOperationId: undefined,
    offeredAt: undefined,
    offerBootId: undefined,
    reconnectDeadline: undefined,
    backAt: undefined,
    backBootId: undefined,
    graceEndsAt: undefined,
    rollbackAt: undefined,
    rollbackBootId: undefined,
    rollbackDeadline: undefined,
    stateChangedAt: now,
    finishedAt: undefined,
  };
}
