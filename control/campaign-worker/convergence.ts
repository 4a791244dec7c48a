/**
 * The leader's convergence pass, the shell around the pure `planConvergence`: in ONE fenced
 * transaction under the start lock, record the targets of newly completed campaigns as
 * desired versions (those whose nodes succeeded within their threshold, at least one), read the desired versions, the fleet and the convergence campaigns, and
 * start what `planConvergence` says (a system-owned campaign per desired version, created by
 * `convergence:<desired id>`) or halt a desired version's convergence after a burst of
 * failures, an operator's abort of one of its campaigns or a yank of its target (audit
 * `convergence.halt`), aborting
 * its running convergence campaign in the same transaction (a command its next decision
 * applies before anything else, so nothing more is offered). The campaigns it starts are ordinary campaigns: the
 * worker decides them like any other, under the same pool budget and rules.
 */
import {
  type AdmissionRules,
  type CampaignSpec,
  type CampaignState,
  CONVERGENCE_CREATOR,
  type ConvergenceRun,
  convergenceFailures,
  convergenceSpec,
  type DesiredVersion,
  desiredOfCampaign,
  desiredRecordRefusal,
  isEndedPhase,
  planConvergence,
  replacesDesired,
} from "../campaign/index.js";
import type { FleetTransaction, LeaderLease, OfferRelease } from "../campaign-store/index.js";
import { ENGINE_ACTOR } from "./audit.js";
import type { WorkerGateway } from "./facts.js";
import { admissionTarget, fleetNodesOf, startSystemCampaign, withBusy } from "./system-start.js";

/** What a convergence pass needs. */
export interface ConvergenceDeps {
  readonly lease: LeaderLease;
  readonly gateway: WorkerGateway;
  /** This Control's instance id. */
  readonly self: string;
  /** The registered release `version`, or undefined. */
  readonly release: (version: string) => Promise<OfferRelease | undefined>;
  /** The policy and `agent.maxVersion` every convergence start is admitted under. */
  readonly rules: AdmissionRules;
  /**
   * Why the release channel's TUF targets (config `tuf.dir`) do not list `version` at
   * `sequence`, or undefined when they do; absent: no channel is configured.
   */
  readonly unlisted?:
    | ((version: string, sequence: number) => Promise<string | undefined>)
    | undefined;
}

/** What a convergence pass did. */
export interface ConvergenceOutcome {
  readonly started: readonly string[];
  /** Convergence campaigns a halt aborted (their next decision applies the abort). */
  readonly aborted: readonly string[];
  readonly halted: readonly { readonly desiredId: string; readonly message: string }[];
  readonly recorded: readonly string[];
}

/**
 * Records the targets of completed campaigns not recorded yet, each that
 * `desiredRecordRefusal` accepts (the others get an audit row saying why); returns the desired
 * ids set.
 */
async function recordCompletions(
  tx: FleetTransaction,
  desired: Map<string, DesiredVersion>,
  now: Date,
): Promise<string[]> {
  const done = await tx.completionsToRecord();
  if (done.length === 0) return [];
  const set: string[] = [];
  for (const c of done) {
    if (c.createdBy.startsWith(CONVERGENCE_CREATOR)) continue;
    const row = await tx.campaigns.readCampaign(c.id);
    if (row === undefined) continue;
    const refusal = desiredRecordRefusal(row.campaign, await tx.campaigns.readNodes(c.id));
    if (refusal !== undefined) {
      await tx.insertAudits(
        [
          {
            actor: ENGINE_ACTOR,
            actorIp: "",
            action: "desired.not_recorded",
            campaignId: c.id,
            message: `campaign ${c.id} completed, but ${refusal}: ${row.targetVersion} is not recorded as a desired version`,
            detail: { version: row.targetVersion, reason: refusal },
          },
        ],
        now,
      );
      continue;
    }
    const next = desiredOfCampaign({
      campaignId: c.id,
      spec: row.campaign.spec,
      selection: await recordedSelection(tx, row.campaign),
      target: { version: row.targetVersion, sequence: row.campaign.targetSequence },
      finishedAt: c.finishedAt,
    });
    if (!replacesDesired(desired.get(next.id), next)) continue;
    desired.set(next.id, next);
    await tx.writeDesired(next);
    set.push(next.id);
    await tx.insertAudits(
      [
        {
          actor: ENGINE_ACTOR,
          actorIp: "",
          action: "desired.record",
          campaignId: c.id,
          message: `campaign ${c.id} completed: ${next.target.version} is the desired version ${next.id} of its selector`,
          detail: { desiredId: next.id, version: next.target.version, selector: next.selector },
        },
      ],
      now,
    );
  }
  await tx.markRecorded(done.map((c) => c.id));
  return set;
}

/**
 * Halts every desired version not halted yet whose target was yanked (audit
 * `convergence.halt`), so no convergence campaign to it starts again; its running convergence
 * campaigns stop on their own (their decisions see the yank). Returns the halts.
 */
async function haltYanked(
  tx: FleetTransaction,
  desired: Map<string, DesiredVersion>,
  now: Date,
): Promise<{ desiredId: string; message: string }[]> {
  const live = [...desired.values()].filter((d) => d.haltedAt === undefined);
  if (live.length === 0) return [];
  const yanks = await tx.campaigns.readYanks([...new Set(live.map((d) => d.target.version))]);
  const halted: { desiredId: string; message: string }[] = [];
  for (const d of live) {
    const yank = yanks.get(d.target.version);
    if (yank === undefined) continue;
    const message = `release ${d.target.version} was yanked: ${yank.reason}`;
    const next = { ...d, haltedAt: now.getTime(), haltedReason: message };
    desired.set(d.id, next);
    await tx.writeDesired(next);
    await tx.insertAudits(
      [
        {
          actor: ENGINE_ACTOR,
          actorIp: "",
          action: "convergence.halt",
          campaignId: d.id,
          message: `desired version ${d.id}: ${message}`,
          detail: { desiredId: d.id, version: d.target.version, yanked: true },
        },
      ],
      now,
    );
    halted.push({ desiredId: d.id, message });
  }
  return halted;
}

/**
 * Every convergence campaign as `planConvergence` reads it; the code of each that ended other
 * than `completed` since its live desired version was set is read from its row (a guard rail's
 * stop or an operator's abort: the halt says which). Those are few: the first one halts.
 */
async function convergenceRuns(
  tx: FleetTransaction,
  desired: ReadonlyMap<string, DesiredVersion>,
): Promise<ConvergenceRun[]> {
  const runs: ConvergenceRun[] = [];
  for (const c of await tx.campaignsCreatedBy(CONVERGENCE_CREATOR)) {
    const desiredId = c.createdBy.slice(CONVERGENCE_CREATOR.length);
    const d = desired.get(desiredId);
    const early = isEndedPhase(c.phase) && c.phase !== "completed";
    const code =
      early && d !== undefined && d.haltedAt === undefined && c.createdAt >= d.setAt
        ? (await tx.campaigns.readCampaign(c.id))?.campaign.code
        : undefined;
    runs.push({
      campaignId: c.id,
      desiredId,
      createdAt: c.createdAt,
      finished: c.finishedAt !== undefined,
      failedNodeIds: c.failedNodeIds,
      phase: c.phase,
      code,
    });
  }
  return runs;
}

/**
 * The selector and exclusions a completed campaign records its desired version over: its
 * own, or for a retry those of the first campaign of its chain of retries (a retry's selector
 * is the list of node ids it retried). A campaign of the chain no longer stored ends the walk.
 */
async function recordedSelection(
  tx: FleetTransaction,
  campaign: CampaignState,
): Promise<Pick<CampaignSpec, "selector" | "exclude">> {
  let origin = campaign;
  const seen = new Set([origin.id]);
  while (origin.retryOf !== undefined && !seen.has(origin.retryOf)) {
    const row = await tx.campaigns.readCampaign(origin.retryOf);
    if (row === undefined) break;
    origin = row.campaign;
    seen.add(origin.id);
  }
  return origin.spec;
}

/** One convergence pass in the caller's transaction (see the file's TSDoc). */
export async function convergencePass(
  deps: ConvergenceDeps,
  tx: FleetTransaction,
  now: Date,
): Promise<ConvergenceOutcome> {
  await deps.lease.fence(tx.campaigns);
  await tx.lockStarts();
  const desired = new Map((await tx.readDesired()).map((d) => [d.id, d]));
  const recorded = await recordCompletions(tx, desired, now);
  if (desired.size === 0) return { started: [], aborted: [], halted: [], recorded };
  const halted = await haltYanked(tx, desired, now);
  let fleet = fleetNodesOf(await tx.readFleet(), deps.gateway, deps.self);
  const runs = await convergenceRuns(tx, desired);
  const steps = planConvergence({
    desired: [...desired.values()],
    fleet,
    runs,
    now: now.getTime(),
  });
  const started: string[] = [];
  const aborted: string[] = [];
  for (const step of steps) {
    const d = desired.get(step.desiredId) as DesiredVersion;
    const unlisted =
      step.kind === "halt" ? undefined : await deps.unlisted?.(d.target.version, d.target.sequence);
    if (unlisted !== undefined) {
      // Every Agent on the channel would refuse it: halted, as a burst of failures halts.
      const message = `convergence to ${d.target.version} halted: ${unlisted}`;
      await tx.writeDesired({ ...d, haltedAt: now.getTime(), haltedReason: message });
      await tx.insertAudits(
        [
          {
            actor: ENGINE_ACTOR,
            actorIp: "",
            action: "convergence.halt",
            campaignId: d.id,
            message: `desired version ${d.id}: ${message}`,
            detail: { desiredId: d.id, reason: "release_unlisted", version: d.target.version },
          },
        ],
        now,
      );
      halted.push({ desiredId: d.id, message });
      continue;
    }
    if (step.kind === "halt") {
      await tx.writeDesired({ ...d, haltedAt: now.getTime(), haltedReason: step.message });
      await tx.insertAudits(
        [
          {
            actor: ENGINE_ACTOR,
            actorIp: "",
            action: "convergence.halt",
            campaignId: runs.filter((r) => r.desiredId === d.id).at(-1)?.campaignId ?? d.id,
            message: `desired version ${d.id}: ${step.message}`,
            detail: { desiredId: d.id, failures: step.failures, nodeIds: step.failedNodeIds },
          },
        ],
        now,
      );
      for (const campaignId of step.abortCampaignIds) {
        await tx.insertCommand(
          {
            campaignId,
            kind: "abort",
            rollback: false,
            reason: step.message,
            actor: ENGINE_ACTOR,
            actorIp: "",
          },
          now,
        );
        aborted.push(campaignId);
      }
      halted.push({ desiredId: d.id, message: step.message });
      continue;
    }
    const result = await startSystemCampaign(tx, {
      campaignId: step.campaignId,
      spec: convergenceSpec(d, step.nodeIds, convergenceFailures(d, runs).length),
      origin: "system",
      target: await admissionTarget(deps.release, d.target),
      fleet,
      rules: deps.rules,
      createdBy: `${CONVERGENCE_CREATOR}${d.id}`,
      now,
      audit: `converging ${step.nodeIds.length} node(s) to the desired version ${d.id}`,
    });
    if (result.kind === "started") {
      started.push(result.campaignId);
      // A later start of this pass is admitted over these nodes too.
      fleet = withBusy(fleet, result.busyNodeIds);
    }
  }
  return { started, aborted, halted, recorded };
}
