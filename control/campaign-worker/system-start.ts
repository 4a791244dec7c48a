/**
 * Starting a campaign from the leader's worker (a convergence campaign, a plan's group), in
 * the caller's fleet transaction under the start lock: the one admission of every start
 * (`admit`: the policy, the release's version, yank, expiry and platforms, a ramp's step limit,
 * confirmed sequences, busy nodes), the campaign's nodes and its "start" audit row written
 * with whatever else the transaction writes.
 */
import {
  type AdmissionRefusal,
  type AdmissionRelease,
  type AdmissionRules,
  admit,
  type CampaignSpec,
  createCampaign,
  type FleetNode,
  holdsNodeBusy,
  refusalMessage,
  type Target,
} from "../campaign/index.js";
import type { FleetRow, FleetTransaction, OfferRelease } from "../campaign-store/index.js";
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
      platform: (live?.platform ?? r.platform) || undefined,
      confirmedSequence: Math.max(live?.confirmedSequence ?? 0, r.confirmedSequence),
      runningSequence: r.runningSequence,
      online,
      busy: r.busy,
    };
  });
}

/**
 * Why a system start did not happen, or the campaign it started with the nodes it now holds
 * busy (`holdsNodeBusy`): a later start in the same pass must count them ({@link withBusy}),
 * as the fleet it was read from does not.
 */
export type SystemStart =
  | {
      readonly kind: "started";
      readonly campaignId: string;
      readonly nodes: number;
      readonly busyNodeIds: readonly string[];
    }
  | { readonly kind: "busy"; readonly nodeIds: readonly string[] }
  | { readonly kind: "empty"; readonly message: string }
  | { readonly kind: "refused"; readonly message: string };

/** A system start's answer for an admission refusal: busy waits, empty is done, else refused. */
function systemAnswer(r: AdmissionRefusal): SystemStart {
  if (r.kind === "busy") return { kind: "busy", nodeIds: r.nodeIds };
  if (r.kind === "nothing_to_upgrade") return { kind: "empty", message: refusalMessage(r) };
  return { kind: "refused", message: refusalMessage(r) };
}

/**
 * Runs the one admission ({@link admit}) for `spec` over `fleet` — `origin` "system" for a
 * convergence campaign's own spec, "operator" for a plan group's (the administrator's
 * template) — and, when admitted, inserts the campaign `campaignId` created by `createdBy`
 * with its "start" audit row. Writes nothing otherwise.
 */
export async function startSystemCampaign(
  tx: FleetTransaction,
  input: {
    readonly campaignId: string;
    readonly spec: CampaignSpec;
    readonly origin: "operator" | "system";
    readonly target: AdmissionRelease;
    readonly fleet: readonly FleetNode[];
    readonly rules: AdmissionRules;
    readonly createdBy: string;
    readonly now: Date;
    readonly audit: string;
  },
): Promise<SystemStart> {
  const busy = new Map<string, string>();
  for (const n of input.fleet) if (n.busy) busy.set(n.id, "");
  const yank = (await tx.campaigns.readYanks([input.target.version])).get(input.target.version);
  const admission = admit({
    intent: "start",
    origin: input.origin,
    spec: input.spec,
    rules: input.rules,
    release: yank === undefined ? input.target : { ...input.target, yanked: yank },
    candidates: input.fleet,
    busy,
    now: input.now.getTime(),
    orderSecret: await tx.readOrderSecret(),
  });
  if (!admission.ok) return systemAnswer(admission.refusal);
  const { plan, target } = admission;
  const { campaign, nodes } = createCampaign({
    id: input.campaignId,
    spec: input.spec,
    plan,
    target,
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
        message: `campaign ${campaign.id} started: ${target.version} to ${plan.totalNodes} node(s) in ${plan.batches.length} batch(es): ${input.audit}`,
        detail: {
          targetVersion: target.version,
          targetSequence: target.sequence,
          nodes: plan.totalNodes,
          skipped: Object.fromEntries(plan.skips.map((k) => [k.code, k.nodeIds.length])),
          createdBy: input.createdBy,
        },
      },
    ],
    input.now,
  );
  return {
    kind: "started",
    campaignId: campaign.id,
    nodes: plan.totalNodes,
    busyNodeIds: nodes.filter((n) => holdsNodeBusy(campaign, n)).map((n) => n.nodeId),
  };
}

/**
 * `fleet` with `nodeIds` marked busy: the fleet a pass read, after it started a campaign over
 * them. Every start of one pass is admitted over the fleet as the starts before it left it, so
 * no node joins two active campaigns (SPEC §4).
 */
export function withBusy(fleet: readonly FleetNode[], nodeIds: readonly string[]): FleetNode[] {
  const busy = new Set(nodeIds);
  return fleet.map((n) => (busy.has(n.id) && !n.busy ? { ...n, busy: true } : n));
}

/** A registered release as admission judges it: its platforms from its artifacts. */
export function admissionRelease(release: OfferRelease): AdmissionRelease {
  return {
    version: release.version,
    sequence: release.sequence,
    expiresAt: release.expiresAt,
    platforms: release.artifacts.map((a) => a.platform),
  };
}

/**
 * What admission knows of a desired version's `target`: the registered release's platforms and
 * expiry when `lookup` finds it, else the version and sequence alone (neither judged).
 */
export async function admissionTarget(
  lookup: (version: string) => Promise<OfferRelease | undefined>,
  target: Target,
): Promise<AdmissionRelease> {
  const release = await lookup(target.version);
  if (release !== undefined && release.sequence === target.sequence) {
    return admissionRelease(release);
  }
  return { ...target, expiresAt: undefined, platforms: undefined };
}
