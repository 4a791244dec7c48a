/**
 * Starting campaigns: plan (no side effects), start (one transaction under the start lock, so
 * two concurrent starts cannot both take a node), and retry (a new campaign over the nodes
 * that did not end on the target: `planRetry`), each a thin shell over the one admission
 * (`admit`) and the fleet store port, so the same code runs on PostgreSQL in Control and on the
 * memory adapter in the simulation. The first offers are made by the leader's worker, which
 * the caller wakes after commit.
 */
import { randomBytes } from "node:crypto";
import {
  type Admission,
  type AdmissionCandidate,
  type AdmissionRelease,
  admit,
  type CampaignSpec,
  type CampaignSpecInput,
  type CampaignState,
  createCampaign,
  gateHostRefusal,
  type Plan,
  type Policy,
  planRetry,
  type RetrySettings,
  resolveSpec,
  yankedPreviousNodeIds,
} from "../campaign/index.js";
import type { FleetRow, FleetStore, FleetTransaction } from "../campaign-store/index.js";
import type { Clock } from "../clock.js";
import type { Actor } from "../db/audit-log.js";
import { ControlError } from "../errors.js";
import { unlistedReason } from "../tuf/listed.js";
import { refusalError } from "./admission-errors.js";
import type { ReleaseLookup } from "./release-lookup.js";

/** What planning and starting need. */
export interface StartDeps {
  /** The registry, campaigns and the start lock (SQL in Control, memory in the simulation). */
  readonly fleet: FleetStore;
  readonly release: ReleaseLookup;
  readonly clock: Clock;
  readonly policy: Policy;
  /** The newest Agent version this Control supports (config `agent.maxVersion`). */
  readonly maxVersion: string | undefined;
  /** The release channel's TUF repository (config `tuf.dir`): a target must be listed there. */
  readonly tufDir?: string | undefined;
  /** `gates.allowedHosts`: a gate on another host is refused (undefined: any host). */
  readonly gateHosts?: readonly string[] | undefined;
}

/** A registry row as an admission candidate. */
function candidateOf(r: FleetRow): AdmissionCandidate {
  return {
    id: r.id,
    labels: r.labels,
    pool: r.pool,
    enabled: r.enabled,
    everConnected: r.everConnected,
    capabilities: r.capabilities,
    agentVersion: r.agentVersion || undefined,
    platform: r.platform || undefined,
    confirmedSequence: r.confirmedSequence,
  };
}

/** The busy nodes of the registry: node id → the campaign it is busy in. */
function busyOf(rows: readonly FleetRow[]): Map<string, string> {
  const busy = new Map<string, string>();
  for (const r of rows) if (r.busy) busy.set(r.id, r.busyIn ?? "");
  return busy;
}

/** The plan of an admission, or its refusal as the administrator's error. */
function admitted(a: Admission): Plan {
  if (!a.ok) throw refusalError(a.refusal);
  return a.plan;
}

/**
 * Refuses a target that the release channel's TUF repository (config `tuf.dir`) does not list:
 * every Agent on the channel would refuse it, so the start is refused here, `release_unusable`.
 */
async function assertListed(deps: StartDeps, release: AdmissionRelease | undefined): Promise<void> {
  if (deps.tufDir === undefined || release === undefined) return;
  const reason = await unlistedReason(deps.tufDir, release.version, release.sequence);
  if (reason !== undefined) {
    throw new ControlError("release_unusable", reason, { version: release.version });
  }
}

/**
 * Refuses a spec with a gate outside `gates.allowedHosts` (when configured), INVALID_ARGUMENT
 * naming the host and the key, before anything is read or written.
 */
function assertGatesAllowed(deps: StartDeps, spec: CampaignSpec): void {
  for (const gate of spec.gates ?? []) {
    const refusal = gateHostRefusal(gate.url, deps.gateHosts);
    if (refusal !== undefined) throw new ControlError("invalid_argument", refusal);
  }
}

/**
 * The ids of the plan's offered nodes whose current release is yanked (a breach would not roll
 * them back onto it: rollback_withheld), read in `tx`.
 */
async function yankedPrevious(
  tx: FleetTransaction,
  plan: Plan,
  rows: readonly FleetRow[],
): Promise<string[]> {
  const versions = new Map(rows.map((r) => [r.id, r.agentVersion || undefined]));
  const current = new Set<string>();
  for (const n of plan.nodes) {
    const v = versions.get(n.nodeId);
    if (v !== undefined) current.add(v);
  }
  if (current.size === 0) return [];
  const yanks = await tx.campaigns.readYanks([...current]);
  return yankedPreviousNodeIds(plan, (id) => versions.get(id), yanks);
}

/**
 * Plans a campaign without starting anything (the admission of a start, minus busy nodes), with
 * the offered nodes whose current release is yanked (`yankedPrevious`).
 */
export async function planOnly(
  deps: StartDeps,
  input: CampaignSpecInput,
): Promise<{ spec: CampaignSpec; plan: Plan; yankedPrevious: string[] }> {
  const spec = resolveSpec(input, deps.policy);
  assertGatesAllowed(deps, spec);
  const release = await deps.release(spec.targetVersion);
  await assertListed(deps, release);
  const [rows, orderSecret] = await deps.fleet.transaction(
    async (tx) => [await tx.readFleet(), await tx.readOrderSecret()] as const,
  );
  const plan = admitted(
    admit({
      intent: "plan",
      origin: "operator",
      spec,
      rules: { policy: deps.policy, maxVersion: deps.maxVersion },
      release,
      candidates: rows.map(candidateOf),
      busy: new Map(),
      now: deps.clock.now().getTime(),
      orderSecret,
    }),
  );
  const onYanked = await deps.fleet.transaction((tx) => yankedPrevious(tx, plan, rows));
  return { spec, plan, yankedPrevious: onYanked };
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
  const [rows, orderSecret] = await deps.fleet.transaction(
    async (tx) => [await tx.readFleet(), await tx.readOrderSecret()] as const,
  );
  const candidates = rows.map(candidateOf);
  const releases = new Map<string, AdmissionRelease | undefined>();
  for (const [i, spec] of specs.entries()) {
    assertGatesAllowed(deps, spec);
    if (!releases.has(spec.targetVersion)) {
      const release = await deps.release(spec.targetVersion);
      await assertListed(deps, release);
      releases.set(spec.targetVersion, release);
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
      orderSecret,
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
  /** The new campaign's id (default: `c-<time>-<random>`); the simulation names its own. */
  readonly id?: string | undefined;
}

/**
 * Starts a campaign: under the start lock, reads the registry with its busy nodes, runs the
 * one admission ({@link admit}; a refusal throws {@link refusalError}'s error and writes
 * nothing), and writes the campaign, its nodes and the "start" audit row.
 */
export async function startCampaign(deps: StartDeps, req: StartRequest): Promise<CampaignState> {
  const { spec } = req;
  assertGatesAllowed(deps, spec);
  const release = await deps.release(spec.targetVersion);
  await assertListed(deps, release);
  return await deps.fleet.transaction(async (tx) => {
    await tx.lockStarts();
    const rows = await tx.readFleet();
    const now = deps.clock.now();
    const admission = admit({
      intent: "start",
      origin: "operator",
      spec,
      rules: { policy: deps.policy, maxVersion: deps.maxVersion },
      release,
      candidates: rows.map(candidateOf),
      busy: busyOf(rows),
      now: now.getTime(),
      orderSecret: await tx.readOrderSecret(),
    });
    if (!admission.ok) throw refusalError(admission.refusal);
    const { plan, target } = admission;
    const onYanked = await yankedPrevious(tx, plan, rows);
    const { campaign, nodes } = createCampaign({
      id: req.id ?? campaignId(now),
      spec,
      plan,
      target,
      now: now.getTime(),
      retryOf: req.retryOf,
    });
    await tx.campaigns.insertCampaign({
      campaign,
      nodes,
      createdBy: req.actor.name,
      createdByIp: req.actor.ip,
      now,
    });
    await tx.insertAudits(
      [
        {
          actor: req.actor.name,
          actorIp: req.actor.ip,
          action: "start",
          campaignId: campaign.id,
          message: `campaign ${campaign.id} started: ${spec.targetVersion} to ${plan.totalNodes} node(s) in ${plan.batches.length} batch(es)${req.retryOf ? `, retrying ${req.retryOf}` : ""}${spec.reason ? `: ${spec.reason}` : ""}${onYanked.length > 0 ? `; ${onYanked.length} node(s) run a yanked release and would not be rolled back onto it on a breach` : ""}`,
          detail: {
            targetVersion: spec.targetVersion,
            targetSequence: target.sequence,
            nodes: plan.totalNodes,
            batches: plan.batches.map((b) => b.nodeIds.length),
            skipped: Object.fromEntries(plan.skips.map((k) => [k.code, k.nodeIds.length])),
            retryOf: req.retryOf ?? null,
            reason: spec.reason,
            yankedPrevious: onYanked.length,
          },
        },
      ],
      now,
    );
    return campaign;
  });
}

/**
 * Retries an ended campaign: its settings, changed by `settings` (`retrySpec`), over its nodes
 * that ended failed, timed_out, skipped, canceled, rolled_back or rollback_failed, minus
 * `excludeNodeIds`, as a new campaign (`retry_of` set), admitted as any start is.
 */
export async function retryCampaign(
  deps: StartDeps,
  req: {
    id: string;
    excludeNodeIds: readonly string[];
    reason: string;
    actor: Actor;
    settings?: RetrySettings | undefined;
  },
): Promise<CampaignState> {
  const found = await deps.fleet.transaction(async (tx) => {
    const row = await tx.campaigns.readCampaign(req.id);
    return row === undefined ? undefined : { row, nodes: await tx.campaigns.readNodes(req.id) };
  });
  if (!found) throw new ControlError("campaign_not_found", `no campaign with id "${req.id}"`);
  const retry = planRetry(
    found.row.campaign,
    found.nodes,
    req.excludeNodeIds,
    req.settings,
    deps.policy,
  );
  if (!retry.ok) {
    throw new ControlError(
      retry.reason === "no_nodes" ? "no_eligible_nodes" : "campaign_state",
      retry.message,
    );
  }
  const spec = req.reason ? { ...retry.spec, reason: req.reason } : retry.spec;
  return await startCampaign(deps, { spec, actor: req.actor, retryOf: req.id });
}
