/**
 * The flags of `campaign plan` and `campaign start`, and how they become a CampaignSpec.
 * Every value is checked here first, so a typo is a usage error naming the flag rather
 * than a server round trip.
 */
import { create } from "@bufbuild/protobuf";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { parseFailureBudget } from "../../control/campaign/failure-budget.js";
import { formatGate, parseGate } from "../../control/campaign/gates.js";
import { parseRamp, parseRate } from "../../control/campaign/ramp.js";
import { MAX_DOWNLOADS, MAX_MIN_CANARIES } from "../../control/campaign/spec.js";
import { formatWindow, parseWindow } from "../../control/campaign/windows.js";
import { isSemver } from "../../control/shared/release/semver.js";
import {
  BatchSpecSchema,
  type CampaignSpec,
  CampaignSpecSchema,
  OnBreach,
  RampSchema,
} from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import {
  type FlagSpecs,
  type FlagValues,
  listFlag,
  parseBatches,
  parseChoice,
  parseDuration,
  parseInteger,
  parseKeyValues,
  parsePercent,
  requiredFlag,
  stringFlag,
  UsageError,
} from "../args.js";

/** Flags shared by `campaign plan` and `campaign start`. */
export const SPEC_FLAGS: FlagSpecs = {
  version: {
    type: "string",
    value: "V",
    description: "target agent version, a registered release (required)",
  },
  batches: {
    type: "string",
    value: "SPEC",
    description:
      "cumulative PERCENT:MIN_DURATION steps, e.g. 5:30m,25:30m,100:30m (default: 5,25,100 %, each lasting Control's policy.minBatchDurationSeconds, 30m unless its config sets it; `campaign plan` shows the batches it would run)",
  },
  threshold: {
    type: "string",
    value: "PERCENT",
    description:
      "a batch breaches when more than this share of its nodes fail; the share is of the batch's nodes not skipped, nodes already on the target included (0-100, default 5)",
  },
  concurrency: {
    type: "string",
    value: "N",
    description: "nodes in flight at once (default 0 = whole batch)",
  },
  "on-breach": {
    type: "string",
    value: "ACTION",
    description: "rollback (default), pause or stop",
  },
  "disruption-budget": {
    type: "string",
    value: "PERCENT",
    description: "at most this share of each pool disrupted at once (0-100, default 5)",
  },
  selector: {
    type: "string",
    multiple: true,
    value: "K=V",
    description: "only nodes with this label (repeatable)",
  },
  pool: {
    type: "string",
    multiple: true,
    value: "POOL",
    description: "only nodes of this pool (repeatable)",
  },
  node: { type: "string", multiple: true, value: "ID", description: "only this node (repeatable)" },
  "exclude-node": {
    type: "string",
    multiple: true,
    value: "ID",
    description: "leave this node out (repeatable)",
  },
  "exclude-tag": {
    type: "string",
    multiple: true,
    value: "K=V",
    description: "leave out nodes with this label (repeatable)",
  },
  "reconnect-timeout": {
    type: "string",
    value: "DURATION",
    description:
      "a node fails unless it is back on the target within this (default: Control's timeouts.reconnectSeconds, 10m unless its config sets it)",
  },
  "config-grace": {
    type: "string",
    value: "DURATION",
    description:
      "how long a config failure still fails an upgraded node; the node holds its disruption-budget slot meanwhile (default: Control's timeouts.configGraceSeconds, 1m unless its config sets it)",
  },
  soak: {
    type: "string",
    value: "DURATION",
    description: "wait after a batch's last node settled (default 0s)",
  },
  "progress-deadline": {
    type: "string",
    value: "DURATION",
    description:
      "report the campaign stalled (audit row, metric) after this long without a node or batch change; it changes nothing else (default: twice the reconnect timeout past its longest wait)",
  },
  "max-failures": {
    type: "string",
    value: "N|P%",
    description:
      "the whole campaign takes --on-breach once more than N nodes (or P% of its nodes not skipped) failed, over every batch, even while each batch is under its threshold",
  },
  "min-canaries": {
    type: "string",
    value: "N",
    description:
      "the first batch holds at least N nodes that can be upgraded (refused when the fleet has fewer), and no batch passes before N of its offered nodes (all it has, when fewer) succeeded or failed",
  },
  "max-downloads": {
    type: "string",
    value: "N",
    description:
      "at most N of the campaign's nodes downloading the artifact at once (from its offer until it reports the download ended), beside --concurrency",
  },
  "max-defer": {
    type: "string",
    value: "DURATION",
    description:
      "a node may answer DEFERRED (busy) for up to this long after its first deferral, offered again when a slot frees; past it the node is skipped with code deferred (default 1h; 0s: skipped at its first deferral)",
  },
  reason: { type: "string", value: "TEXT", description: "why, for the audit log" },
  window: {
    type: "string",
    multiple: true,
    value: "WINDOW",
    description:
      'offer only within "[DAYS] HH:MM-HH:MM [TIME_ZONE]", e.g. "Mon-Fri 02:00-04:00 Europe/Berlin" (repeatable)',
  },
  ramp: {
    type: "string",
    value: "RATE×FACTOR",
    description: "exponential ramp instead of --batches, e.g. 10/min×2 (x also accepted)",
  },
  "ramp-max": {
    type: "string",
    value: "RATE",
    description: "the ramp's maximum rate, e.g. 200/min",
  },
  "ramp-step": {
    type: "string",
    value: "DURATION",
    description: "how long each ramp step lasts at least (default: the policy minimum)",
  },
  gate: {
    type: "string",
    multiple: true,
    value: "GATE",
    description:
      'outside health gate: "prometheus URL QUERY [OP NUMBER]" or "webhook URL" (repeatable)',
  },
  "gate-grace": {
    type: "string",
    value: "DURATION",
    description: "an unreachable gate fails the batch after this (default 1m)",
  },
};

const ON_BREACH: Readonly<Record<string, OnBreach>> = {
  rollback: OnBreach.ROLLBACK,
  pause: OnBreach.PAUSE,
  stop: OnBreach.STOP,
};

function optionalDuration(values: FlagValues, flag: string) {
  const text = stringFlag(values, flag);
  return text === undefined ? undefined : durationFromMs(parseDuration(text, flag));
}

/**
 * Builds the CampaignSpec the flags describe. Flags left out stay unset, so Control
 * applies its configured defaults.
 */
export function specFromFlags(values: FlagValues): CampaignSpec {
  const version = requiredFlag(values, "version");
  if (!isSemver(version)) {
    throw new UsageError(
      `invalid --version "${version}": expected a semantic version such as 1.4.0`,
    );
  }
  const spec = create(CampaignSpecSchema, {
    targetVersion: version,
    reason: stringFlag(values, "reason") ?? "",
    selector: {
      labels: parseKeyValues(listFlag(values, "selector"), "selector"),
      pools: listFlag(values, "pool"),
      nodeIds: listFlag(values, "node"),
    },
    exclude: {
      nodeIds: listFlag(values, "exclude-node"),
      tags: parseKeyValues(listFlag(values, "exclude-tag"), "exclude-tag"),
    },
  });
  const batches = stringFlag(values, "batches");
  if (batches !== undefined) {
    spec.batches = parseBatches(batches).map((b) =>
      create(BatchSpecSchema, {
        percent: b.percent,
        ...(b.minDurationMs === undefined ? {} : { minDuration: durationFromMs(b.minDurationMs) }),
      }),
    );
  }
  const threshold = stringFlag(values, "threshold");
  if (threshold !== undefined) spec.failureThresholdPercent = parsePercent(threshold, "threshold");
  const budget = stringFlag(values, "disruption-budget");
  if (budget !== undefined)
    spec.disruptionBudgetPercent = parsePercent(budget, "disruption-budget");
  const concurrency = stringFlag(values, "concurrency");
  if (concurrency !== undefined)
    spec.concurrency = parseInteger(concurrency, "concurrency", 0, 1_000_000);
  const onBreach = stringFlag(values, "on-breach");
  if (onBreach !== undefined) {
    spec.onBreach =
      ON_BREACH[parseChoice(onBreach, "on-breach", ["rollback", "pause", "stop"])] ??
      OnBreach.UNSPECIFIED;
  }
  const reconnect = optionalDuration(values, "reconnect-timeout");
  if (reconnect !== undefined) spec.reconnectTimeout = reconnect;
  const grace = optionalDuration(values, "config-grace");
  if (grace !== undefined) spec.configGrace = grace;
  const soak = optionalDuration(values, "soak");
  if (soak !== undefined) spec.soak = soak;
  const deadline = optionalDuration(values, "progress-deadline");
  if (deadline !== undefined) {
    if (Number(deadline.seconds) === 0 && deadline.nanos === 0)
      throw new UsageError("invalid --progress-deadline: it must be longer than 0s");
    spec.progressDeadline = deadline;
  }
  const maxFailures = stringFlag(values, "max-failures");
  if (maxFailures !== undefined) {
    const parsed = parseFailureBudget(maxFailures);
    if (!parsed.ok) throw new UsageError(`invalid --max-failures: ${parsed.message}`);
    spec.maxFailures =
      parsed.value.kind === "count"
        ? { case: "maxFailuresCount", value: parsed.value.count }
        : { case: "maxFailuresPercent", value: parsed.value.percent };
  }
  const minCanaries = stringFlag(values, "min-canaries");
  if (minCanaries !== undefined)
    spec.minCanaries = parseInteger(minCanaries, "min-canaries", 1, MAX_MIN_CANARIES);
  const maxDownloads = stringFlag(values, "max-downloads");
  if (maxDownloads !== undefined)
    spec.maxDownloads = parseInteger(maxDownloads, "max-downloads", 1, MAX_DOWNLOADS);
  const maxDefer = optionalDuration(values, "max-defer");
  if (maxDefer !== undefined) {
    if (Number(maxDefer.seconds) > 7 * 24 * 3600)
      throw new UsageError("invalid --max-defer: at most 168h (7 days)");
    spec.maxDefer = maxDefer;
  }
  scheduleFromFlags(values, spec);
  return spec;
}

/** Sets the spec's windows, ramp and gates from their flags (each checked here first). */
function scheduleFromFlags(values: FlagValues, spec: CampaignSpec): void {
  spec.windows = listFlag(values, "window").map((text) => {
    const parsed = parseWindow(text);
    if (!parsed.ok) throw new UsageError(`invalid --window: ${parsed.message}`);
    return formatWindow(parsed.window);
  });
  const ramp = stringFlag(values, "ramp");
  const rampMax = stringFlag(values, "ramp-max");
  const rampStep = optionalDuration(values, "ramp-step");
  if (ramp === undefined && (rampMax !== undefined || rampStep !== undefined)) {
    throw new UsageError("--ramp-max and --ramp-step need --ramp");
  }
  if (ramp !== undefined) {
    if (stringFlag(values, "batches") !== undefined) {
      throw new UsageError("--ramp replaces --batches: give one or the other");
    }
    const parsed = parseRamp(ramp);
    if (!parsed.ok) throw new UsageError(`invalid --ramp: ${parsed.message}`);
    let maxPerMinute = 0;
    if (rampMax !== undefined) {
      const max = parseRate(rampMax);
      if (!max.ok) throw new UsageError(`invalid --ramp-max: ${max.message}`);
      maxPerMinute = max.value;
    }
    spec.ramp = create(RampSchema, {
      startPerMinute: parsed.value.startPerMinute,
      factor: parsed.value.factor,
      maxPerMinute,
      ...(rampStep === undefined ? {} : { step: rampStep }),
    });
  }
  spec.gates = listFlag(values, "gate").map((text) => {
    const parsed = parseGate(text);
    if (!parsed.ok) throw new UsageError(`invalid --gate: ${parsed.message}`);
    return formatGate(parsed.gate);
  });
  const grace = optionalDuration(values, "gate-grace");
  if (grace !== undefined) spec.gateGrace = grace;
}
