/**
 * A campaign's settings: the policy that bounds them, their defaults, and their validation.
 */
import { DEFAULT_GATE_GRACE_MS, type Gate } from "./gates.js";
import type { Ramp } from "./ramp.js";
import type { MaintenanceWindow } from "./windows.js";

/** What a campaign does when a batch breaches its failure threshold. */
export type OnBreach = "rollback" | "pause" | "stop";

/**
 * The whole campaign's failure budget (`--max-failures N|P%`): at most `count` failed nodes, or
 * at most `percent` % of the campaign's offerable nodes (every batch's nodes not skipped).
 */
export type FailureBudget =
  | { readonly kind: "count"; readonly count: number }
  | { readonly kind: "percent"; readonly percent: number };

/** Which nodes a campaign considers. Empty fields match everything; non-empty fields are AND-ed. */
export interface Selector {
  /** Every pair must be among the node's labels. */
  readonly labels: Readonly<Record<string, string>>;
  /** The node's pool must be one of these. */
  readonly pools: readonly string[];
  /** The node's id must be one of these. */
  readonly nodeIds: readonly string[];
}

/** Which candidates a campaign leaves out. */
export interface Exclude {
  readonly nodeIds: readonly string[];
  /** A node carrying ANY of these label pairs is left out. */
  readonly tags: Readonly<Record<string, string>>;
}

/** One cumulative step: the nodes up to `percent` of the campaign, for at least `minDurationMs`. */
export interface BatchSpec {
  readonly percent: number;
  readonly minDurationMs: number;
}

/** A campaign spec with every default resolved; the engine only ever sees this form. */
export interface CampaignSpec {
  readonly targetVersion: string;
  readonly selector: Selector;
  readonly exclude: Exclude;
  readonly batches: readonly BatchSpec[];
  readonly failureThresholdPercent: number;
  /** At most this many nodes in flight at once; 0 = the whole batch. */
  readonly concurrency: number;
  readonly onBreach: OnBreach;
  readonly reconnectTimeoutMs: number;
  readonly configGraceMs: number;
  readonly soakMs: number;
  /** At most this share of each pool in flight at once, and always at least one node. */
  readonly disruptionBudgetPercent: number;
  readonly reason: string;
  /** When it may offer (`windows.ts`); absent or empty: always. */
  readonly windows?: readonly MaintenanceWindow[] | undefined;
  /** Set instead of `batches` (which is then empty): its steps are the batches (`ramp.ts`). */
  readonly ramp?: Ramp | undefined;
  /** Outside health gates every batch must pass (`gates.ts`); absent or empty: none. */
  readonly gates?: readonly Gate[] | undefined;
  /** How long a gate may stay unreachable before it counts as failing (with gates). */
  readonly gateGraceMs?: number | undefined;
  /**
   * How long the campaign may go without progress before it is reported stalled
   * (`progress.ts`); absent: `defaultProgressDeadlineMs`.
   */
  readonly progressDeadlineMs?: number | undefined;
  /**
   * The campaign's failure budget over every batch (`failure-budget.ts`): more failed nodes
   * than it takes `onBreach` even while every batch is under its threshold; absent: none.
   */
  readonly maxFailures?: FailureBudget | undefined;
  /**
   * The minimum sample (`failure-budget.ts`): the first batch holds at least this many nodes
   * that can be upgraded, and no batch passes before this many of its offered nodes (or all
   * it has, when fewer) settled; absent: none.
   */
  readonly minCanaries?: number | undefined;
  /**
   * The download budget (`download-budget.ts`): at most this many of the campaign's nodes
   * fetching the artifact at once, beside `concurrency`; absent: none.
   */
  readonly maxDownloads?: number | undefined;
  /**
   * Deferral (`deferral.ts`): how long after its first DEFERRED answer a node may keep
   * deferring before it ends skipped `deferred`; absent: `DEFAULT_MAX_DEFER_MS` (1 hour).
   */
  readonly maxDeferMs?: number | undefined;
}

/** A ramp as an administrator gives it: the step length defaults to the policy minimum. */
export interface RampInput {
  readonly startPerMinute: number;
  readonly factor: number;
  readonly maxPerMinute?: number | undefined;
  readonly stepMs?: number | undefined;
}

/** What an administrator may leave out of a spec (the API's optional and zero fields). */
export interface CampaignSpecInput {
  readonly targetVersion: string;
  readonly selector?: Partial<Selector> | undefined;
  readonly exclude?: Partial<Exclude> | undefined;
  readonly batches?: readonly BatchSpec[] | undefined;
  readonly failureThresholdPercent?: number | undefined;
  readonly concurrency?: number | undefined;
  readonly onBreach?: OnBreach | undefined;
  readonly reconnectTimeoutMs?: number | undefined;
  readonly configGraceMs?: number | undefined;
  readonly soakMs?: number | undefined;
  readonly disruptionBudgetPercent?: number | undefined;
  readonly reason?: string | undefined;
  readonly windows?: readonly MaintenanceWindow[] | undefined;
  readonly ramp?: RampInput | undefined;
  readonly gates?: readonly Gate[] | undefined;
  readonly gateGraceMs?: number | undefined;
  /** 0 or absent: the default (`defaultProgressDeadlineMs`). */
  readonly progressDeadlineMs?: number | undefined;
  /** Absent: no campaign-wide failure budget. */
  readonly maxFailures?: FailureBudget | undefined;
  /** 0 or absent: no minimum sample. */
  readonly minCanaries?: number | undefined;
  /** 0 or absent: no download budget. */
  readonly maxDownloads?: number | undefined;
  /** Absent: the default (1 hour); 0: a node that defers is skipped at once. */
  readonly maxDeferMs?: number | undefined;
}

/** Operator policy (config file `policy.*` and `timeouts.*`), bounding and defaulting specs. */
export interface Policy {
  readonly minBatchDurationMs: number;
  readonly firstBatchMaxPercent: number;
  readonly maxBatches: number;
  /** Default reconnect timeout of a spec that names none. */
  readonly reconnectTimeoutMs: number;
  /** Default config grace of a spec that names none. */
  readonly configGraceMs: number;
}

/** The policy of SPEC §7's defaults (agentupgrade's H19 rules). */
export const DEFAULT_POLICY: Policy = {
  minBatchDurationMs: 30 * 60_000,
  firstBatchMaxPercent: 5,
  maxBatches: 10,
  reconnectTimeoutMs: 10 * 60_000,
  configGraceMs: 60_000,
};

/** Default failure threshold, in percent of a batch's offerable nodes. */
export const DEFAULT_FAILURE_THRESHOLD_PERCENT = 5;
/** Default per-pool disruption budget, in percent of the pool. */
export const DEFAULT_DISRUPTION_BUDGET_PERCENT = 5;
/** Default cumulative batch percentages. */
export const DEFAULT_BATCH_PERCENTS: readonly number[] = [5, 25, 100];

/**
 * Fills every field the input leaves out. Batches default to 5/25/100 % lasting the policy
 * minimum each; threshold 5 %; concurrency 0; on_breach rollback; reconnect timeout and config
 * grace from the policy; soak 0; disruption budget 5 %. With a ramp, batches stay as given
 * (empty: the ramp's steps are the batches) and its step lasts the policy minimum unless given;
 * with gates, the gate grace defaults to {@link DEFAULT_GATE_GRACE_MS}. Windows, ramp and gates
 * appear in the result only when given. Never validates: see {@link validateSpec}.
 */
export function resolveSpec(
  input: CampaignSpecInput,
  policy: Policy = DEFAULT_POLICY,
): CampaignSpec {
  const batches =
    input.batches !== undefined && input.batches.length > 0
      ? input.batches
      : input.ramp !== undefined
        ? []
        : DEFAULT_BATCH_PERCENTS.map((percent) => ({
            percent,
            minDurationMs: policy.minBatchDurationMs,
          }));
  const gates = input.gates ?? [];
  return {
    targetVersion: input.targetVersion,
    selector: {
      labels: input.selector?.labels ?? {},
      pools: input.selector?.pools ?? [],
      nodeIds: input.selector?.nodeIds ?? [],
    },
    exclude: { nodeIds: input.exclude?.nodeIds ?? [], tags: input.exclude?.tags ?? {} },
    batches,
    failureThresholdPercent: input.failureThresholdPercent ?? DEFAULT_FAILURE_THRESHOLD_PERCENT,
    concurrency: input.concurrency ?? 0,
    onBreach: input.onBreach ?? "rollback",
    reconnectTimeoutMs: input.reconnectTimeoutMs || policy.reconnectTimeoutMs,
    configGraceMs: input.configGraceMs ?? policy.configGraceMs,
    soakMs: input.soakMs ?? 0,
    disruptionBudgetPercent: input.disruptionBudgetPercent ?? DEFAULT_DISRUPTION_BUDGET_PERCENT,
    reason: input.reason ?? "",
    ...(input.windows !== undefined && input.windows.length > 0 ? { windows: input.windows } : {}),
    ...(input.ramp === undefined
      ? {}
      : {
          ramp: {
            startPerMinute: input.ramp.startPerMinute,
            factor: input.ramp.factor,
            maxPerMinute: input.ramp.maxPerMinute ?? 0,
            stepMs: input.ramp.stepMs || policy.minBatchDurationMs,
          },
        }),
    ...(gates.length > 0 ? { gates, gateGraceMs: input.gateGraceMs ?? DEFAULT_GATE_GRACE_MS } : {}),
    ...(input.progressDeadlineMs ? { progressDeadlineMs: input.progressDeadlineMs } : {}),
    ...(input.maxFailures === undefined ? {} : { maxFailures: input.maxFailures }),
    ...(input.minCanaries ? { minCanaries: input.minCanaries } : {}),
    ...(input.maxDownloads ? { maxDownloads: input.maxDownloads } : {}),
    ...(input.maxDeferMs === undefined ? {} : { maxDeferMs: input.maxDeferMs }),
  };
}

/** One thing wrong with a spec: the field (API path) and a sentence a person can act on. */
export interface Violation {
  readonly field: string;
  readonly message: string;
}

const isInt = (n: number): boolean => Number.isSafeInteger(n);
const minutes = (ms: number): string => `${Math.round((ms / 60_000) * 100) / 100} min`;

/**
 * Every violation of the policy and of the field ranges, in field order; empty when valid.
 * Batches: 1..maxBatches, integer percents 1..100, strictly increasing, the last 100, the first at
 * most firstBatchMaxPercent, each lasting at least the policy minimum.
 */
export function validateSpec(spec: CampaignSpec, policy: Policy = DEFAULT_POLICY): Violation[] {
  const out: Violation[] = [];
  const add = (field: string, message: string): void => {
    out.push({ field, message });
  };
  if (spec.targetVersion.trim() === "") add("target_version", "a target version is required");
  if (spec.ramp !== undefined) {
    validateRamp(spec, policy, add);
  } else {
    validateBatches(spec, policy, add);
  }
  const percent = (field: string, v: number): void => {
    if (!isInt(v) || v < 0 || v > 100)
      add(field, `${field} must be an integer from 0 to 100, not ${v}`);
  };
  percent("failure_threshold_percent", spec.failureThresholdPercent);
  percent("disruption_budget_percent", spec.disruptionBudgetPercent);
  if (!isInt(spec.concurrency) || spec.concurrency < 0) {
    add(
      "concurrency",
      `concurrency must be a whole number ≥ 0 (0 = the whole batch), not ${spec.concurrency}`,
    );
  }
  if (!(spec.reconnectTimeoutMs > 0))
    add("reconnect_timeout", "the reconnect timeout must be positive");
  if (!(spec.configGraceMs >= 0)) add("config_grace", "the config grace must not be negative");
  if (!(spec.soakMs >= 0)) add("soak", "the soak must not be negative");
  if ((spec.windows?.length ?? 0) > MAX_WINDOWS)
    add("windows", `a campaign has at most ${MAX_WINDOWS} windows, not ${spec.windows?.length}`);
  if ((spec.gates?.length ?? 0) > MAX_GATES)
    add("gates", `a campaign has at most ${MAX_GATES} gates, not ${spec.gates?.length}`);
  if (spec.progressDeadlineMs !== undefined && !(spec.progressDeadlineMs > 0))
    add("progress_deadline", "the progress deadline must be positive");
  if (spec.gates !== undefined && spec.gates.length > 0 && !((spec.gateGraceMs ?? 0) >= 0))
    add("gate_grace", "the gate grace must not be negative");
  validateSample(spec, add);
  const downloads = spec.maxDownloads;
  if (
    downloads !== undefined &&
    !(isInt(downloads) && downloads >= 1 && downloads <= MAX_DOWNLOADS)
  )
    add(
      "max_downloads",
      `max downloads must be a whole number from 1 to ${MAX_DOWNLOADS}, not ${downloads}`,
    );
  return out;
}

/** The most maintenance windows a campaign may name. */
export const MAX_WINDOWS = 32;
/** The most gates a campaign may name. */
export const MAX_GATES = 8;

type Add = (field: string, message: string) => void;

/** The most nodes `--max-downloads` may allow at once. */
export const MAX_DOWNLOADS = 1_000_000;

/** The most nodes `--min-canaries` may ask for. */
export const MAX_MIN_CANARIES = 100_000;

/** The longest `maxDeferMs` a campaign may ask for: seven days. */
export const MAX_MAX_DEFER_MS = 7 * 24 * 3_600_000;

function validateSample(spec: CampaignSpec, add: Add): void {
  const budget = spec.maxFailures;
  if (budget?.kind === "count" && !(isInt(budget.count) && budget.count >= 0))
    add("max_failures", `max failures must be a whole number ≥ 0, not ${budget.count}`);
  if (
    budget?.kind === "percent" &&
    !(isInt(budget.percent) && budget.percent >= 0 && budget.percent <= 100)
  )
    add("max_failures", `max failures must be an integer from 0 to 100 %, not ${budget.percent} %`);
  const min = spec.minCanaries;
  if (min !== undefined && !(isInt(min) && min >= 1 && min <= MAX_MIN_CANARIES))
    add(
      "min_canaries",
      `min canaries must be a whole number from 1 to ${MAX_MIN_CANARIES}, not ${min}`,
    );
  const defer = spec.maxDeferMs;
  if (defer !== undefined && !(isInt(defer) && defer >= 0 && defer <= MAX_MAX_DEFER_MS))
    add("max_defer", `max defer must be from 0 to 7 days, not ${minutes(defer)}`);
}

function validateRamp(spec: CampaignSpec, policy: Policy, add: Add): void {
  const r = spec.ramp as Ramp;
  if (spec.batches.length > 0) add("ramp", "a campaign has batches or a ramp, not both");
  if (!(r.startPerMinute > 0 && Number.isFinite(r.startPerMinute)))
    add("ramp.rate", `the ramp's rate must be above 0, not ${r.startPerMinute}/min`);
  if (!(r.factor >= 1 && Number.isFinite(r.factor)))
    add("ramp.factor", `the ramp's factor must be ≥ 1, not ${r.factor}`);
  if (!(r.maxPerMinute >= 0) || (r.maxPerMinute > 0 && r.maxPerMinute < r.startPerMinute))
    add(
      "ramp.max",
      `the ramp's maximum (${r.maxPerMinute}/min) must be at least its rate (${r.startPerMinute}/min)`,
    );
  if (!(r.stepMs >= policy.minBatchDurationMs))
    add(
      "ramp.step",
      `a ramp step lasts at least ${minutes(policy.minBatchDurationMs)}, not ${minutes(r.stepMs)}`,
    );
}

function validateBatches(spec: CampaignSpec, policy: Policy, add: Add): void {
  const { batches } = spec;
  if (batches.length < 1 || batches.length > policy.maxBatches) {
    add("batches", `a campaign has 1 to ${policy.maxBatches} batches, not ${batches.length}`);
  }
  batches.forEach((b, i) => {
    const field = `batches[${i}]`;
    if (!isInt(b.percent) || b.percent < 1 || b.percent > 100) {
      add(
        `${field}.percent`,
        `batch ${i + 1}: percent must be an integer from 1 to 100, not ${b.percent}`,
      );
    }
    const prev = batches[i - 1];
    if (prev !== undefined && b.percent <= prev.percent) {
      add(
        `${field}.percent`,
        `batch ${i + 1}: percentages must strictly increase (${prev.percent} then ${b.percent})`,
      );
    }
    if (!(b.minDurationMs >= policy.minBatchDurationMs)) {
      add(
        `${field}.min_duration`,
        `batch ${i + 1}: lasts at least ${minutes(policy.minBatchDurationMs)}, not ${minutes(b.minDurationMs)}`,
      );
    }
  });
  const first = batches[0];
  if (first !== undefined && first.percent > policy.firstBatchMaxPercent) {
    add(
      "batches[0].percent",
      `the first (canary) batch is at most ${policy.firstBatchMaxPercent} %, not ${first.percent} %`,
    );
  }
  const last = batches[batches.length - 1];
  if (last !== undefined && last.percent !== 100) {
    add(
      `batches[${batches.length - 1}].percent`,
      `the last batch must be 100 %, not ${last.percent} %`,
    );
  }
}
