/**
 * Admission: the one rule of who joins a campaign, for every start — an administrator's
 * start, plan and retry, a rollout plan's group, a convergence campaign, the simulated
 * operator. Pure: given the spec, the policy, the target release, the candidates and the busy
 * nodes, it answers the plan to create or the reason to refuse. The shells only read the store
 * and map a refusal to their own answer (`control/admin/campaign-start.ts`,
 * `control/campaign-worker/system-start.ts`).
 *
 * The checks, in this order (the first that fails is the answer):
 * 1. the spec against the policy (`validateSpec`), for specs an administrator wrote;
 * 2. the release: registered, not yanked, not newer than `agent.maxVersion`, not expired;
 * 3. a ramp's steps: at most the policy's batch limit (`maxBatches`), counted for the nodes
 *    the spec selects with the policy's canary share;
 * 4. the plan (`planCampaign`, canary share from the policy, platforms and sequence from the
 *    release): nodes already on the target, without upgrade.v1, of a platform the release
 *    lacks, or whose agent confirmed a higher sequence (`ahead_of_target`: it would refuse the
 *    release) are settled without an offer;
 * 5a. with `--min-canaries N`, at least N planned nodes would be offered the upgrade;
 * 6. (a start) no planned node is busy in another campaign, and some node can be upgraded.
 */
import { compareSemver } from "../shared/release/semver.js";
import type { Target } from "./model.js";
import { type Candidate, type Plan, planCampaign, selection } from "./plan.js";
import { rampStepsNeeded } from "./ramp.js";
import { type CampaignSpec, type Policy, type Violation, validateSpec } from "./spec.js";

/** The operator's limits a start is held to (config `policy.*` and `agent.maxVersion`). */
export interface AdmissionRules {
  readonly policy: Policy;
  /** The newest Agent version this Control supports; undefined: no limit. */
  readonly maxVersion: string | undefined;
}

/** The registered release a campaign targets, as admission judges it. */
export interface AdmissionRelease extends Target {
  /** When it expires (epoch ms); undefined: not known here (not judged). */
  readonly expiresAt: number | undefined;
  /** The platforms it carries an artifact for; undefined: not known here (not judged). */
  readonly platforms: readonly string[] | undefined;
  /** Set when an operator yanked it (`agentctl release yank`); absent: not yanked. */
  readonly yanked?: { readonly reason: string } | undefined;
}

/** A candidate with the highest release sequence its agent confirmed. */
export interface AdmissionCandidate extends Candidate {
  readonly confirmedSequence: number;
}

/** What admission judges. */
export interface AdmissionInput {
  /** `plan` answers what a start would do; `start` also refuses busy nodes and empty plans. */
  readonly intent: "plan" | "start";
  /**
   * `operator`: a spec an administrator wrote (start, retry, a plan's groups), held to the
   * policy's batch rules; `system`: Control's own convergence spec (one batch, threshold 100 %),
   * whose shape is not an administrator's choice. Every other check applies to both.
   */
  readonly origin: "operator" | "system";
  readonly spec: CampaignSpec;
  readonly rules: AdmissionRules;
  /** The target release; undefined when it is not registered. */
  readonly release: AdmissionRelease | undefined;
  readonly candidates: readonly AdmissionCandidate[];
  /** Node id → the campaign it is busy in ("" when not known); read only with intent `start`. */
  readonly busy: ReadonlyMap<string, string>;
  /** Epoch ms, for the release's expiry. */
  readonly now: number;
  /** The fleet's canary-order secret (`FleetTransaction.readOrderSecret`): keys canary order. */
  readonly orderSecret: string;
}

/** Why a campaign cannot start (or be planned), with what a message needs. */
export type AdmissionRefusal =
  | { readonly kind: "invalid_spec"; readonly violations: readonly Violation[] }
  | { readonly kind: "release_not_found"; readonly version: string }
  | { readonly kind: "release_yanked"; readonly version: string; readonly reason: string }
  | {
      readonly kind: "too_few_canaries";
      readonly minCanaries: number;
      /** The planned nodes that would be offered the upgrade. */
      readonly upgradable: number;
      readonly totalNodes: number;
    }
  | { readonly kind: "release_too_new"; readonly version: string; readonly maxVersion: string }
  | { readonly kind: "release_expired"; readonly version: string; readonly expiresAt: number }
  | {
      readonly kind: "too_many_steps";
      readonly steps: number;
      readonly nodes: number;
      readonly limit: number;
    }
  | {
      readonly kind: "busy";
      /** In canary order. */
      readonly nodeIds: readonly string[];
      /** The campaigns they are busy in, first seen first (unknown ones left out). */
      readonly campaignIds: readonly string[];
    }
  | { readonly kind: "nothing_to_upgrade"; readonly totalNodes: number; readonly version: string };

/** The answer of {@link admit}. */
export type Admission =
  | { readonly ok: true; readonly plan: Plan; readonly target: Target }
  | { readonly ok: false; readonly refusal: AdmissionRefusal };

const refuse = (refusal: AdmissionRefusal): Admission => ({ ok: false, refusal });

/**
 * Judges a start or a plan (see the file's TSDoc for the checks and their order). Never
 * throws on bad input: every problem is a refusal. The plan it admits is the one to create.
 */
export function admit(input: AdmissionInput): Admission {
  const { spec, rules, release } = input;
  const { policy } = rules;
  if (input.origin === "operator") {
    const violations = validateSpec(spec, policy);
    if (violations.length > 0) return refuse({ kind: "invalid_spec", violations });
  }
  if (release === undefined) {
    return refuse({ kind: "release_not_found", version: spec.targetVersion });
  }
  if (release.yanked !== undefined) {
    return refuse({
      kind: "release_yanked",
      version: release.version,
      reason: release.yanked.reason,
    });
  }
  if (rules.maxVersion !== undefined && compareSemver(release.version, rules.maxVersion) > 0) {
    return refuse({
      kind: "release_too_new",
      version: release.version,
      maxVersion: rules.maxVersion,
    });
  }
  if (release.expiresAt !== undefined && release.expiresAt <= input.now) {
    return refuse({
      kind: "release_expired",
      version: release.version,
      expiresAt: release.expiresAt,
    });
  }
  if (spec.ramp !== undefined) {
    const nodes = input.candidates.filter(selection(spec)).length;
    const steps = rampStepsNeeded(nodes, spec.ramp, policy.firstBatchMaxPercent);
    if (steps > policy.maxBatches) {
      return refuse({ kind: "too_many_steps", steps, nodes, limit: policy.maxBatches });
    }
  }
  const plan = planCampaign(
    spec,
    input.candidates,
    policy.firstBatchMaxPercent,
    { platforms: release.platforms, sequence: release.sequence },
    input.orderSecret,
  );
  const min = spec.minCanaries;
  if (min !== undefined && plan.upgradableCount < min) {
    return refuse({
      kind: "too_few_canaries",
      minCanaries: min,
      upgradable: plan.upgradableCount,
      totalNodes: plan.totalNodes,
    });
  }
  const target = { version: release.version, sequence: release.sequence };
  if (input.intent === "plan") return { ok: true, plan, target };
  const busyIds = plan.nodes.map((n) => n.nodeId).filter((id) => input.busy.has(id));
  if (busyIds.length > 0) {
    const campaignIds = [...new Set(busyIds.map((id) => input.busy.get(id) ?? ""))].filter(
      (c) => c !== "",
    );
    return refuse({ kind: "busy", nodeIds: busyIds, campaignIds });
  }
  if (plan.upgradableCount === 0) {
    return refuse({
      kind: "nothing_to_upgrade",
      totalNodes: plan.totalNodes,
      version: release.version,
    });
  }
  return { ok: true, plan, target };
}
