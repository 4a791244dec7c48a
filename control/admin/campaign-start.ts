/**
 * Starting campaigns: plan (no side effects), start (one transaction under an advisory lock,
 * so two concurrent starts cannot both take a node), and retry (a new campaign over the
 * nodes that ended failed, timed_out, skipped or canceled). The first offers are made by the
 * leader's worker, which the caller wakes after commit.
 */
import { randomBytes } from "node:crypto";
import {
  type Admission,
  type AdmissionCandidate,
  type AdmissionRefusal,
  type AdmissionRelease,
  admit,
  assertNever,
  type CampaignSpec,
  type CampaignSpecInput,
  type CampaignState,
  createCampaign,
  NAMED_IN_MESSAGE,
  type Plan,
  type Policy,
  planRetry,
  refusalMessage,
  resolveSpec,
  selects,
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

/** What planning and starting need. */
export interface StartDeps {
  readonly db: Database;
  readonly clock: Clock;
  readonly policy: Policy;
  /** The newest Agent version this Control supports (config `agent.maxVersion`). */
  readonly maxVersion: string | undefined;
}

/** A planning candidate with the highest release sequence its agent reported confirmed. */
export type StartCandidate = AdmissionCandidate;

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
    platform: string;
    confirmed_sequence: string;
  }>(
    `select id, labels, pool, enabled, first_seen is not null as ever, capabilities, agent_version,
            platform, confirmed_sequence
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
    platform: r.platform || undefined,
    confirmedSequence: Number(r.confirmed_sequence),
  }));
}

/** The registered release `version` as admission judges it (undefined when not registered). */
async function readRelease(
  deps: StartDeps,
  version: string,
): Promise<AdmissionRelease | undefined> {
  const release = await deps.db.em().findOne(ReleaseEntity, { version });
  if (!release) return undefined;
  return {
    version: release.version,
    sequence: release.sequence,
    expiresAt: release.expiresAt.getTime(),
    platforms: release.artifacts.map((a) => a.platform),
  };
}

/**
 * The error an administrator gets for an admission refusal: invalid_plan (spec or ramp),
 * release_not_found, invalid_argument (above agent.maxVersion), release_unusable (expired, or
 * below a sequence a node confirmed, naming the nodes), node_busy (naming the nodes and their
 * campaigns) or no_eligible_nodes; the message is {@link refusalMessage}'s.
 */
export function refusalError(r: AdmissionRefusal): ControlError {
  const message = refusalMessage(r);
  switch (r.kind) {
    case "invalid_spec":
      return new ControlError("invalid_plan", message, {
        field: r.violations.map((v) => `spec.${v.field}`).join(","),
      });
    case "release_not_found":
      return new ControlError("release_not_found", message);
    case "release_too_new":
      return new ControlError("invalid_argument", message, { field: "spec.target_version" });
    case "release_expired":
      return new ControlError("release_unusable", message, {
        version: r.version,
        expiresAt: new Date(r.expiresAt).toISOString(),
      });
    case "too_many_steps":
      return new ControlError("invalid_plan", message, { field: "spec.ramp" });
    case "below_confirmed":
      return new ControlError("release_unusable", message, {
        version: r.version,
        sequence: String(r.sequence),
        nodeIds: r.nodes
          .slice(0, NAMED_IN_MESSAGE)
          .map((n) => n.id)
          .join(","),
        confirmedSequence: String(Math.max(...r.nodes.map((n) => n.confirmedSequence))),
      });
    case "busy":
      return new ControlError("node_busy", message, {
        nodeIds: r.nodeIds.slice(0, NAMED_IN_MESSAGE).join(","),
        nodeCount: String(r.nodeIds.length),
        campaignIds: r.campaignIds.slice(0, NAMED_IN_MESSAGE).join(","),
      });
    case "nothing_to_upgrade":
      return new ControlError("no_eligible_nodes", message);
    default:
      return assertNever(r, "admission refusal");
  }
}

/** The plan of an admission, or its refusal as the administrator's error. */
function admitted(a: Admission): Plan {
  if (!a.ok) throw refusalError(a.refusal);
  return a.plan;
}

/** Plans a campaign without starting anything (the admission of a start, minus busy nodes). */
export async function planOnly(
  deps: StartDeps,
  input: CampaignSpecInput,
): Promise<{ spec: CampaignSpec; plan: Plan }> {
  const spec = resolveSpec(input, deps.policy);
  const plan = admitted(
    admit({
      intent: "plan",
      origin: "operator",
      spec,
      rules: { policy: deps.policy, maxVersion: deps.maxVersion },
      release: await readRelease(deps, spec.targetVersion),
      candidates: await readCandidates(deps.db.pool),
      busy: new Map(),
      now: deps.clock.now().getTime(),
    }),
  );
  return { spec, plan };
}

/**
 * Admits each spec as a plan would (every check of a start but busy nodes and an empty plan),
 * over one read of the candidates; throws the first refusal's {@link refusalError}, its message
 * prefixed with `label(index)`. A rollout plan's groups are checked so at `plan start`.
 */
export async function admitEach(
  deps: StartDeps,
  specs: readonly CampaignSpec[],
  label: (index: number) => string,
): Promise<void> {
  const candidates = await readCandidates(deps.db.pool);
  const releases = new Map<string, AdmissionRelease | undefined>();
  for (const [i, spec] of specs.entries()) {
    if (!releases.has(spec.targetVersion)) {
      releases.set(spec.targetVersion, await readRelease(deps, spec.targetVersion));
    }
    const a = admit({
      intent: "plan",
      origin: "operator",
      spec,
      rules: { policy: deps.policy, maxVersion: deps.maxVersion },
      release: releases.get(spec.targetVersion),
      candidates,
      busy: new Map(),
      now: deps.clock.now().getTime(),
    });
    if (!a.ok) {
      const e = refusalError(a.refusal);
      throw new ControlError(e.code, `${label(i)}: ${e.message}`, e.metadata);
    }
  }
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
 * Starts a campaign: under the start lock, reads the candidates and the nodes busy in other
 * campaigns, runs the one admission ({@link admit}; a refusal throws {@link refusalError}'s
 * error and writes nothing), and writes the campaign, its nodes and the "start" audit row.
 */
export async function startCampaign(deps: StartDeps, req: StartRequest): Promise<CampaignState> {
  const { spec } = req;
  const release = await readRelease(deps, spec.targetVersion);
  return await inTransaction(deps.db.pool, async (client) => {
    await client.query("select pg_advisory_xact_lock($1)", [START_LOCK_KEY]);
    const candidates = await readCandidates(client);
    const busy = await busyNodes(
      client,
      candidates.filter((c) => selects(spec, c)).map((c) => c.id),
    );
    const now = deps.clock.now();
    const admission = admit({
      intent: "start",
      origin: "operator",
      spec,
      rules: { policy: deps.policy, maxVersion: deps.maxVersion },
      release,
      candidates,
      busy,
      now: now.getTime(),
    });
    if (!admission.ok) throw refusalError(admission.refusal);
    const { plan, target } = admission;
    const { campaign, nodes } = createCampaign({
      id: campaignId(now),
      spec,
      plan,
      target,
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
            targetSequence: target.sequence,
            nodes: plan.totalNodes,
            batches: plan.batches.map((b) => b.nodeIds.length),
            skipped: Object.fromEntries(plan.skips.map((k) => [k.code, k.nodeIds.length])),
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
