/**
 * Starting a campaign from the leader's worker (a convergence campaign, a plan's group), in
 * the caller's fleet transaction under the start lock: the same planning, busy and confirmed
 * sequence rules as an administrator's start, the campaign's nodes and its "start" audit row
 * written with whatever else the transaction writes.
 */
import {
  type CampaignSpec,
  type Candidate,
  createCampaign,
  type FleetNode,
  planCampaign,
  type Target,
} from "../campaign/index.js";
import type { FleetRow, FleetTransaction } from "../campaign-store/index.js";
import { ENGINE_ACTOR } from "./audit.js";
import type { WorkerGateway } from "./facts.js";

/** The fleet as the pure rules see it: registry rows, with liveness and versions from the hub. */
export function fleetNodesOf(
  rows: readonly FleetRow[],
  gateway: WorkerGateway,
  self: string,
): FleetNode[] {
  return rows.map((r) => {
    const live = gateway.connected(r.id);
    // As the decision's facts: a stream here, or an online row held by another Control.
    const elsewhere = r.online && r.heldBy !== null && r.heldBy !== "" && r.heldBy !== self;
    const online = live !== undefined || elsewhere;
    return {
      id: r.id,
      labels: r.labels,
      pool: r.pool,
      enabled: r.enabled,
      everConnected: r.everConnected || live !== undefined,
      capabilities: live?.capabilities ?? r.capabilities,
      agentVersion: (live?.agentVersion ?? r.agentVersion) || undefined,
      confirmedSequence: Math.max(live?.confirmedSequence ?? 0, r.confirmedSequence),
      runningSequence: r.runningSequence,
      online,
      busy: r.busy,
    };
  });
}

/** Why a system start did not happen, or the campaign it started. */
export type SystemStart =
  | { readonly kind: "started"; readonly campaignId: string; readonly nodes: number }
  | { readonly kind: "busy"; readonly nodeIds: readonly string[] }
  | { readonly kind: "empty"; readonly message: string }
  | { readonly kind: "refused"; readonly message: string };

/**
 * Plans `spec` over `fleet` and, unless a node it takes is busy, none can be upgraded, or a
 * node it would offer the release to confirmed a higher sequence, inserts the campaign
 * `campaignId` created by `createdBy` with its "start" audit row.
 */
export async function startSystemCampaign(
  tx: FleetTransaction,
  input: {
    readonly campaignId: string;
    readonly spec: CampaignSpec;
    readonly target: Target;
    readonly fleet: readonly FleetNode[];
    readonly createdBy: string;
    readonly now: Date;
    readonly audit: string;
  },
): Promise<SystemStart> {
  const candidates: Candidate[] = [...input.fleet];
  const plan = planCampaign(input.spec, candidates);
  const byId = new Map(input.fleet.map((n) => [n.id, n]));
  const busy = plan.nodes.filter((n) => byId.get(n.nodeId)?.busy === true).map((n) => n.nodeId);
  if (busy.length > 0) return { kind: "busy", nodeIds: busy };
  if (plan.upgradableCount === 0) {
    return {
      kind: "empty",
      message:
        plan.totalNodes === 0
          ? "no enabled node that has connected matches the selector"
          : `all ${plan.totalNodes} selected node(s) are already on ${input.target.version} or lack upgrade.v1`,
    };
  }
  const settled = new Set([...plan.upToDateNodeIds, ...plan.unsupportedNodeIds]);
  const above = plan.nodes
    .map((n) => byId.get(n.nodeId))
    .filter(
      (n): n is FleetNode =>
        n !== undefined && !settled.has(n.id) && n.confirmedSequence > input.target.sequence,
    );
  if (above.length > 0) {
    return {
      kind: "refused",
      message: `release ${input.target.version} has sequence ${input.target.sequence}, below the sequence ${above
        .map((n) => `${n.id} (${n.confirmedSequence})`)
        .slice(0, 10)
        .join(", ")} confirmed: they would refuse it`,
    };
  }
  const { campaign, nodes } = createCampaign({
    id: input.campaignId,
    spec: input.spec,
    plan,
    target: input.target,
    now: input.now.getTime(),
  });
  await tx.campaigns.insertCampaign({
    campaign,
    nodes,
    createdBy: input.createdBy,
    createdByIp: "",
    now: input.now,
  });
  await tx.insertAudits(
    [
      {
        actor: ENGINE_ACTOR,
        actorIp: "",
        action: "start",
        campaignId: campaign.id,
        message: `campaign ${campaign.id} started: ${input.target.version} to ${plan.totalNodes} node(s) in ${plan.batches.length} batch(es): ${input.audit}`,
        detail: {
          targetVersion: input.target.version,
          targetSequence: input.target.sequence,
          nodes: plan.totalNodes,
          createdBy: input.createdBy,
        },
      },
    ],
    input.now,
  );
  return { kind: "started", campaignId: campaign.id, nodes: plan.totalNodes };
}
