/**
 * Conversions between the admin API's campaign spec and the engine's: a request spec in
 * (parsed and checked field by field, defaults left to `resolveSpec`) and a resolved spec out,
 * as `campaign show` and the plan answer print it (webhook URLs redacted).
 */
import { create } from "@bufbuild/protobuf";
import { type Duration, durationFromMs, durationMs, type FieldMask } from "@bufbuild/protobuf/wkt";
import {
  type CampaignSpec as CampaignSpecMessage,
  CampaignSpecSchema,
  OnBreach as OnBreachEnum,
} from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import {
  type CampaignSpec,
  type CampaignSpecInput,
  type FailureBudget,
  formatWindow,
  maxDeferOf,
  type OnBreach,
  type Policy,
  parseGate,
  parseWindow,
  progressDeadlineMs,
  type RetrySettings,
  redactedGateText,
} from "../campaign/index.js";
import { ControlError } from "../errors.js";

const ms = (d: Duration | undefined): number | undefined => (d ? durationMs(d) : undefined);

function onBreachFromProto(v: OnBreachEnum): OnBreach | undefined {
  switch (v) {
    case OnBreachEnum.ROLLBACK:
      return "rollback";
    case OnBreachEnum.PAUSE:
      return "pause";
    case OnBreachEnum.STOP:
      return "stop";
    case OnBreachEnum.UNSPECIFIED:
      return undefined;
    default:
      throw new ControlError("invalid_argument", `unknown on_breach value ${v}`, {
        field: "spec.on_breach",
      });
  }
}

/**
 * The engine's spec input of a request spec. A batch without `min_duration` lasts the policy
 * minimum; everything else left out is defaulted by `resolveSpec`.
 */
export function specInputFromProto(
  spec: CampaignSpecMessage | undefined,
  policy: Policy,
): CampaignSpecInput {
  if (!spec) throw new ControlError("invalid_argument", "spec is required", { field: "spec" });
  return {
    targetVersion: spec.targetVersion.trim(),
    selector: {
      labels: { ...(spec.selector?.labels ?? {}) },
      pools: [...(spec.selector?.pools ?? [])],
      nodeIds: [...(spec.selector?.nodeIds ?? [])],
    },
    exclude: {
      nodeIds: [...(spec.exclude?.nodeIds ?? [])],
      tags: { ...(spec.exclude?.tags ?? {}) },
    },
    batches: spec.batches.map((b) => ({
      percent: b.percent,
      minDurationMs: ms(b.minDuration) ?? policy.minBatchDurationMs,
    })),
    failureThresholdPercent: spec.failureThresholdPercent,
    concurrency: spec.concurrency,
    onBreach: onBreachFromProto(spec.onBreach),
    reconnectTimeoutMs: ms(spec.reconnectTimeout),
    configGraceMs: ms(spec.configGrace),
    soakMs: ms(spec.soak),
    disruptionBudgetPercent: spec.disruptionBudgetPercent,
    reason: spec.reason,
    windows: spec.windows.map((text) => {
      const parsed = parseWindow(text);
      if (!parsed.ok) throw new ControlError("invalid_argument", parsed.message);
      return parsed.window;
    }),
    ramp: spec.ramp
      ? {
          startPerMinute: spec.ramp.startPerMinute,
          factor: spec.ramp.factor || 2,
          maxPerMinute: spec.ramp.maxPerMinute,
          stepMs: ms(spec.ramp.step),
        }
      : undefined,
    gates: spec.gates.map((text) => {
      const parsed = parseGate(text);
      if (!parsed.ok) throw new ControlError("invalid_argument", parsed.message);
      return parsed.gate;
    }),
    gateGraceMs: ms(spec.gateGrace),
    progressDeadlineMs: ms(spec.progressDeadline),
    maxFailures: failureBudgetFromProto(spec.maxFailures),
    minCanaries: spec.minCanaries,
    maxDownloads: spec.maxDownloads,
    maxDeferMs: ms(spec.maxDefer),
  };
}

/**
 * The settings a retry may change, by the name of their CampaignSpec field (a path of
 * `RetryCampaignRequest.settings_mask`): every field but target_version, selector, exclude and
 * reason. The oneof `max_failures` answers to its name and to each of its fields'.
 */
const RETRY_SETTINGS: Readonly<Record<string, keyof RetrySettings>> = {
  batches: "batches",
  failure_threshold_percent: "failureThresholdPercent",
  concurrency: "concurrency",
  on_breach: "onBreach",
  reconnect_timeout: "reconnectTimeoutMs",
  config_grace: "configGraceMs",
  soak: "soakMs",
  disruption_budget_percent: "disruptionBudgetPercent",
  windows: "windows",
  ramp: "ramp",
  gates: "gates",
  gate_grace: "gateGraceMs",
  progress_deadline: "progressDeadlineMs",
  max_failures: "maxFailures",
  max_failures_count: "maxFailures",
  max_failures_percent: "maxFailures",
  min_canaries: "minCanaries",
  max_downloads: "maxDownloads",
  max_defer: "maxDeferMs",
};

/**
 * The settings a RetryCampaign request changes: the fields of `settings` named in `mask`, each
 * parsed as StartCampaign parses it ({@link specInputFromProto}: a named field left unset takes
 * what a start would, its default or none). Validation is the start's: the retry's whole spec
 * goes through the one admission. INVALID_ARGUMENT for a path that names no setting a retry may
 * change (target_version, selector, exclude and reason are the retried campaign's).
 */
export function retrySettingsFromProto(
  settings: CampaignSpecMessage | undefined,
  mask: FieldMask | undefined,
  policy: Policy,
): RetrySettings {
  const paths = mask?.paths ?? [];
  if (paths.length === 0) return {};
  const input = specInputFromProto(settings ?? create(CampaignSpecSchema), policy);
  const out: Record<string, unknown> = {};
  for (const path of paths) {
    const key = Object.hasOwn(RETRY_SETTINGS, path) ? RETRY_SETTINGS[path] : undefined;
    if (key === undefined) {
      throw new ControlError(
        "invalid_argument",
        `settings_mask: a retry cannot change "${path}"; it may change ${Object.keys(RETRY_SETTINGS).join(", ")}`,
        { field: "settings_mask" },
      );
    }
    out[key] = input[key];
  }
  return out as RetrySettings;
}

/** The spec's failure budget of the request's `max_failures` oneof; unset: none. */
function failureBudgetFromProto(b: CampaignSpecMessage["maxFailures"]): FailureBudget | undefined {
  switch (b.case) {
    case "maxFailuresCount":
      return { kind: "count", count: b.value };
    case "maxFailuresPercent":
      return { kind: "percent", percent: b.value };
    default:
      return undefined;
  }
}

const ON_BREACH: Record<OnBreach, OnBreachEnum> = {
  rollback: OnBreachEnum.ROLLBACK,
  pause: OnBreachEnum.PAUSE,
  stop: OnBreachEnum.STOP,
};

/** A resolved spec as the API shows it. */
export function specToProto(spec: CampaignSpec): CampaignSpecMessage {
  return create(CampaignSpecSchema, {
    targetVersion: spec.targetVersion,
    selector: {
      labels: { ...spec.selector.labels },
      pools: [...spec.selector.pools],
      nodeIds: [...spec.selector.nodeIds],
    },
    exclude: { nodeIds: [...spec.exclude.nodeIds], tags: { ...spec.exclude.tags } },
    batches: spec.batches.map((b) => ({
      percent: b.percent,
      minDuration: durationFromMs(b.minDurationMs),
    })),
    failureThresholdPercent: spec.failureThresholdPercent,
    concurrency: spec.concurrency,
    onBreach: ON_BREACH[spec.onBreach],
    reconnectTimeout: durationFromMs(spec.reconnectTimeoutMs),
    configGrace: durationFromMs(spec.configGraceMs),
    soak: durationFromMs(spec.soakMs),
    disruptionBudgetPercent: spec.disruptionBudgetPercent,
    reason: spec.reason,
    windows: (spec.windows ?? []).map(formatWindow),
    ...(spec.ramp
      ? {
          ramp: {
            startPerMinute: spec.ramp.startPerMinute,
            factor: spec.ramp.factor,
            maxPerMinute: spec.ramp.maxPerMinute,
            step: durationFromMs(spec.ramp.stepMs),
          },
        }
      : {}),
    // Webhook URLs are secrets: the API shows their origin only.
    gates: (spec.gates ?? []).map(redactedGateText),
    ...(spec.gateGraceMs === undefined ? {} : { gateGrace: durationFromMs(spec.gateGraceMs) }),
    // The deadline in force: the campaign's own, or the default it gets.
    progressDeadline: durationFromMs(progressDeadlineMs(spec)),
    ...(spec.maxFailures === undefined
      ? {}
      : {
          maxFailures:
            spec.maxFailures.kind === "count"
              ? { case: "maxFailuresCount" as const, value: spec.maxFailures.count }
              : { case: "maxFailuresPercent" as const, value: spec.maxFailures.percent },
        }),
    minCanaries: spec.minCanaries ?? 0,
    maxDownloads: spec.maxDownloads ?? 0,
    // The limit in force: the campaign's own, or the default it gets.
    maxDefer: durationFromMs(maxDeferOf(spec)),
  });
}
