/**
 * The flags of `campaign plan` and `campaign start`, and how they become a CampaignSpec.
 * Every value is checked here first, so a typo is a usage error naming the flag rather
 * than a server round trip.
 */
import { create } from "@bufbuild/protobuf";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { isSemver } from "../../control/shared/release/semver.js";
import {
  BatchSpecSchema,
  type CampaignSpec,
  CampaignSpecSchema,
  OnBreach,
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
    description: "cumulative PERCENT:MIN_DURATION steps (default 5:30m,25:30m,100:30m)",
  },
  threshold: {
    type: "string",
    value: "PERCENT",
    description: "a batch breaches when more than this share of its nodes fail (0-100, default 5)",
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
    description: "a node fails unless it is back on the target within this (default 10m)",
  },
  "config-grace": {
    type: "string",
    value: "DURATION",
    description: "how long a config failure still fails an upgraded node (default 1m)",
  },
  soak: {
    type: "string",
    value: "DURATION",
    description: "wait after a batch's last node settled (default 0s)",
  },
  reason: { type: "string", value: "TEXT", description: "why, for the audit log" },
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
  return spec;
}
