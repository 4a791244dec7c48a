/**
 * Starting campaigns: plan (no side effects), start (one transaction under an advisory lock,
 * so two concurrent starts cannot both take a node), and retry (a new campaign over the
 * nodes that ended failed, timed_out, skipped or canceled). The first offers are made by the
 * leader's worker, which the caller wakes after commit.
 */
import { randomBytes } from "node:crypto";
import {
  type CampaignSpec,
  type CampaignSpecInput,
  type CampaignState,
  type Candidate,
  createCampaign,
  MAX_RAMP_STEPS,
  type Plan,
  type Policy,
  planCampaign,
  planRetry,
  resolveSpec,
  validateSpec,
} from "../campaign/index.js";
import {
  busyNodes,
  insertAudits,
  insertCampaign,
  inTransaction,
  type Queryable,
  readCampaign,
  readNodes,
  START_LOCK_KEY,
} from "../campaign-store/index.js";
import type { Clock } from "../clock.js";
import type { Actor } from "../db/audit-log.js";
import type { Database } from "../db/database.js";
import { ReleaseEntity } from "../db/entities/index.js";
import { ControlError } from "../errors.js";
import { compareSemver } from "../shared/release/index.js";

/** What planning and starting need. */
export interface StartDeps {
  readonly db: Database;
  readonly clock: Clock;
  readonly policy: Policy;
  /** The newest Agent version this Control supports (config `agent.maxVersion`). */
  readonly maxVersion: string | undefined;
}

const MAX_NAMED = 50;
/** How many nodes a refusal over confirmed sequences names before "and N more". */
const MAX_NAMED_CONFIRMED = 10;

/** A planning candidate with the highest release sequence its agent reported confirmed. */
export interface StartCandidate extends Candidate {
  readonly confirmedSequence: number;
}

/** Every node of the registry as a planning candidate. */
export async function readCandidates(q: Queryable): Promise<StartCandidate[]> {
  const result = await q.query<{
    id: string;
    labels: Record<string, string>;
    pool: string;
    enabled: boolean;
    ever: boolean;
    capabilities: string[];
    agent_version: string;
    confirmed_sequence: string;
  }>(
    `select id, labels, pool, enabled and not pending as enabled, first_seen is not null as ever, capabilities, agent_version,
            confirmed_sequence
       from nodes`,
  );
  return result.rows.map((r) => ({
    id: r.id,
    labels: r.labels,
    pool: r.pool,
    enabled: r.enabled,
    everConnected: r.ever,
    capabilities: r.capabilities,
    agentVersion: r.agent_version || undefined,
    confirmedSequence: Number(r.confirmed_sequence),
  }));
}

/** What the start checks read of the target release. */
interface TargetRelease {
  readonly version: string;
  readonly sequence: number;
  readonly expiresAt: Date;
}

/**
 * The release a campaign targets, after the registry, `agent.maxVersion` and expiry checks.
 * An expired release would be refused by every agent (SPEC §3), so it is refused here,
 * by the injected clock, with `release_unusable` (FAILED_PRECONDITION).
 */
async function targetRelease(deps: StartDeps, spec: CampaignSpec): Promise<TargetRelease> {
  const release = await deps.db.em().findOne(ReleaseEntity, { version: spec.targetVersion });
  if (!release) {
    throw new ControlError(
      "release_not_found",
      `release ${spec.targetVersion} is not registered (agentctl release register)`,
    );
  }
  if (deps.maxVersion !== undefined && compareSemver(spec.targetVersion, deps.maxVersion) > 0) {
    throw new ControlError(
      "invalid_argument",
      `release ${spec.targetVersion} is newer than ${deps.maxVersion}, the newest Agent this Control supports (agent.maxVersion)`,
      { field: "spec.target_version" },
    );
  }
  const { expiresAt } = release;
  if (expiresAt.getTime() <= deps.clock.now().getTime()) {
    throw new ControlError(
      "release_unusable",
      `release ${release.version} expired at ${expiresAt.toISOString()}; register a newer one`,
      { version: release.version, expiresAt: expiresAt.toISOString() },
    );
  }
  return { version: release.version, sequence: release.sequence, expiresAt };
}

/**
 * Refuses a plan that would offer the release to a node that confirmed a higher sequence:
 * its agent never moves its confirmed sequence back and would refuse the offer, so the
 * canary batch would only breach. Only the nodes the plan would offer the release to count
 * (not those already on the target or lacking upgrade.v1, nor any node outside the plan).
 */
function refuseBelowConfirmed(
  release: TargetRelease,
  plan: Plan,
  candidates: readonly StartCandidate[],
): void {
  const byId = new Map(candidates.map((c) => [c.id, c]));
  const settled = new Set([...plan.upToDateNodeIds, ...plan.unsupportedNodeIds]);
  const above: StartCandidate[] = [];
  for (const planned of plan.nodes) {
    const node = byId.get(planned.nodeId);
    if (node && !settled.has(node.id) && node.confirmedSequence > release.sequence) {
      above.push(node);
    }
  }
  if (above.length === 0) return;
  const highest = Math.max(...above.map((n) => n.confirmedSequence));
  const uniform = above.every((n) => n.confirmedSequence === highest);
  const named = above
    .slice(0, MAX_NAMED_CONFIRMED)
    .map((n) => (uniform ? n.id : `${n.id} (${n.confirmedSequence})`))
    .join(", ");
  const more =
    above.length > MAX_NAMED_CONFIRMED ? ` (and ${above.length - MAX_NAMED_CONFIRMED} more)` : "";
  const which = uniform ? `sequence ${highest}` : `sequences up to ${highest}`;
  const who = above.length === 1 ? `node ${named} has` : `nodes ${named}${more} have`;
  throw new ControlError(
    "release_unusable",
    `release ${release.version} has sequence ${release.sequence}, below ${which} that ${who} confirmed: ${above.length === 1 ? "it" : "they"} would refuse it`,
    {
      version: release.version,
      sequence: String(release.sequence),
      nodeIds: above
        .slice(0, MAX_NAMED)
        .map((n) => n.id)
        .join(","),
      confirmedSequence: String(highest),
    },
  );
}

/** Resolves and validates a spec; throws invalid_plan listing every violation. */
export function checkedSpec(spec: CampaignSpec, policy: Policy): CampaignSpec {
  const violations = validateSpec(spec, policy);
  if (violations.length > 0) {
    throw new ControlError(
      "invalid_plan",
      `the campaign is not valid: ${violations.map((v) => `${v.field}: ${v.message}`).join("; ")}`,
      { field: violations.map((v) => `spec.${v.field}`).join(",") },
    );
  }
  return spec;
}

/** Plans a campaign without starting anything (same checks as a start, minus busy nodes). */
export async function planOnly(
  deps: StartDeps,
  input: CampaignSpecInput,
): Promise<{ spec: CampaignSpec; plan: Plan }> {
  const spec = checkedSpec(resolveSpec(input, deps.policy), deps.policy);
  const release = await targetRelease(deps, spec);
  const candidates = await readCandidates(deps.db.pool);
  const plan = planCampaign(spec, candidates, deps.policy.firstBatchMaxPercent);
  refuseLongRamp(spec, plan);
  refuseBelowConfirmed(release, plan, candidates);
  return { spec, plan };
}

/** Refuses a ramp whose steps would exceed MAX_RAMP_STEPS for the planned nodes (invalid_plan). */
function refuseLongRamp(spec: CampaignSpec, plan: Plan): void {
  if (spec.ramp === undefined || plan.batches.length <= MAX_RAMP_STEPS) return;
  throw new ControlError(
    "invalid_plan",
    `the ramp needs more than ${MAX_RAMP_STEPS} steps for ${plan.totalNodes} nodes; raise its rate, factor or maximum, or lengthen its step`,
    { field: "spec.ramp" },
  );
}

function campaignId(now: Date): string {
  const stamp = now.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  return `c-${stamp}-${randomBytes(3).toString("hex")}`;
}

/** A start request: a resolved spec, who asks, and the campaign it retries if any. */
export interface StartRequest {
  readonly spec: CampaignSpec;
  readonly actor: Actor;
  readonly retryOf?: string | undefined;
}

/**
 * Starts a campaign: validates the spec, checks the release (release_unusable when expired),
 * plans over the current candidates, refuses a release below a sequence that a node it would
 * offer it to has confirmed (release_unusable naming them), busy nodes (node_busy naming
 * them) and plans with nothing to upgrade (no_eligible_nodes), and writes the campaign, its
 * nodes and the "start" audit row.
 */
export async function startCampaign(deps: StartDeps, req: StartRequest): Promise<CampaignState> {
  const spec = checkedSpec(req.spec, deps.policy);
  const release = await targetRelease(deps, spec);
  return await inTransaction(deps.db.pool, async (client) => {
    await client.query("select pg_advisory_xact_lock($1)", [START_LOCK_KEY]);
    const candidates = await readCandidates(client);
    const plan = planCampaign(spec, candidates, deps.policy.firstBatchMaxPercent);
    refuseLongRamp(spec, plan);
    refuseBelowConfirmed(release, plan, candidates);
    const busy = await busyNodes(
      client,
      plan.nodes.map((n) => n.nodeId),
    );
    if (busy.size > 0) {
      const ids = [...busy.keys()];
      const campaigns = [...new Set(busy.values())];
      const named = ids.slice(0, MAX_NAMED).join(", ");
      const more = ids.length > MAX_NAMED ? ` and ${ids.length - MAX_NAMED} more` : "";
      throw new ControlError(
        "node_busy",
        `${ids.length} node(s) already in an active campaign (${campaigns.join(", ")}): ${named}${more}`,
        {
          nodeIds: ids.slice(0, MAX_NAMED).join(","),
          nodeCount: String(ids.length),
          campaignIds: campaigns.slice(0, MAX_NAMED).join(","),
        },
      );
    }
    if (plan.upgradableCount === 0) {
      const why =
        plan.totalNodes === 0
          ? "no enabled node that has connected matches the selector"
          : `all ${plan.totalNodes} selected node(s) are already on ${spec.targetVersion} or lack upgrade.v1`;
      throw new ControlError("no_eligible_nodes", `no node can be upgraded: ${why}`);
    }
    const now = deps.clock.now();
    const { campaign, nodes } = createCampaign({
      id: campaignId(now),
      spec,
      plan,
      target: { version: release.version, sequence: release.sequence },
      now: now.getTime(),
      retryOf: req.retryOf,
    });
    await insertCampaign(client, {
      campaign,
      nodes,
      createdBy: req.actor.name,
      createdByIp: req.actor.ip,
      now,
    });
    await insertAudits(
      client,
      [
        {
          actor: req.actor.name,
          actorIp: req.actor.ip,
          action: "start",
          campaignId: campaign.id,
          message: `campaign ${campaign.id} started: ${spec.targetVersion} to ${plan.totalNodes} node(s) in ${plan.batches.length} batch(es)${req.retryOf ? `, retrying ${req.retryOf}` : ""}${spec.reason ? `: ${spec.reason}` : ""}`,
          detail: {
            targetVersion: spec.targetVersion,
            targetSequence: release.sequence,
            nodes: plan.totalNodes,
            batches: plan.batches.map((b) => b.nodeIds.length),
            retryOf: req.retryOf ?? null,
            reason: spec.reason,
          },
        },
      ],
      now,
    );
    return campaign;
  });
}

/**
 * Retries an ended campaign: the same settings over its nodes that ended failed, timed_out,
 * skipped or canceled, minus `excludeNodeIds`, as a new campaign (`retry_of` set).
 */
export async function retryCampaign(
  deps: StartDeps,
  req: { id: string; excludeNodeIds: readonly string[]; reason: string; actor: Actor },
): Promise<CampaignState> {
  const row = await readCampaign(deps.db.pool, req.id);
  if (!row) throw new ControlError("campaign_not_found", `no campaign with id "${req.id}"`);
  const retry = planRetry(row.campaign, await readNodes(deps.db.pool, req.id), req.excludeNodeIds);
  if (!retry.ok) {
    throw new ControlError(
      retry.reason === "no_nodes" ? "no_eligible_nodes" : "campaign_state",
      retry.message,
    );
  }
  const spec = req.reason ? { ...retry.spec, reason: req.reason } : retry.spec;
  return await startCampaign(deps, { spec, actor: req.actor, retryOf: req.id });
}
