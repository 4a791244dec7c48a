/**
 * A campaign's spec in the words of `campaign plan|start`'s flags: one field per flag, named
 * as the flag and written as its value is typed (`batches: 5:30m,100:30m`, `on-breach:
 * rollback`, `soak: 0s`). `--json` and `-o yaml` print every campaign's spec this way, and a
 * campaign file (`campaign start -f`) is read back through the flags' own parser, so what
 * `campaign show -o yaml` prints is a file `start -f` accepts.
 */
import { type Duration, durationMs } from "@bufbuild/protobuf/wkt";
import { formatRate } from "../../control/campaign/ramp.js";
import { type CampaignSpec, OnBreach } from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { formatDuration } from "../args.js";

/** A field's value: a flag's text or number, a repeatable flag's list, or a `K=V` map. */
export type FieldValue = string | number | string[] | Record<string, string>;

const ON_BREACH_WORDS: Readonly<Record<OnBreach, string | undefined>> = {
  [OnBreach.UNSPECIFIED]: undefined,
  [OnBreach.ROLLBACK]: "rollback",
  [OnBreach.PAUSE]: "pause",
  [OnBreach.STOP]: "stop",
};

const duration = (d: Duration | undefined): string | undefined =>
  d === undefined ? undefined : formatDuration(durationMs(d));

/** `5:30m,25:30m,100:30m` (a batch without a minimum duration is its percentage alone). */
function batchesText(spec: CampaignSpec): string | undefined {
  if (spec.batches.length === 0) return undefined;
  return spec.batches
    .map((b) =>
      b.minDuration === undefined ? `${b.percent}` : `${b.percent}:${duration(b.minDuration)}`,
    )
    .join(",");
}

/** `10/min×2`, as `--ramp` takes it. */
function rampFields(spec: CampaignSpec): [string, FieldValue | undefined][] {
  const r = spec.ramp;
  if (r === undefined) return [];
  return [
    ["ramp", `${formatRate(r.startPerMinute)}×${r.factor === 0 ? 2 : r.factor}`],
    ["ramp-max", r.maxPerMinute > 0 ? formatRate(r.maxPerMinute) : undefined],
    ["ramp-step", duration(r.step)],
  ];
}

function maxFailuresText(spec: CampaignSpec): string | undefined {
  const b = spec.maxFailures;
  if (b.case === "maxFailuresCount") return String(b.value);
  if (b.case === "maxFailuresPercent") return `${b.value}%`;
  return undefined;
}

const list = (items: readonly string[]): string[] | undefined =>
  items.length === 0 ? undefined : [...items];
const map = (m: Readonly<Record<string, string>>): Record<string, string> | undefined =>
  Object.keys(m).length === 0 ? undefined : { ...m };
const positive = (n: number): number | undefined => (n > 0 ? n : undefined);

/**
 * The spec as flag-named fields, in the order of `--help`. A field is present only when the
 * spec sets it (Control stores specs with its defaults filled in, so a shown campaign carries
 * nearly all of them); a spec with a ramp has no `batches` (the ramp's steps are its batches).
 * Every field is one that `campaign start -f` accepts, with a value its flag accepts.
 */
export function specFields(spec: CampaignSpec): Record<string, FieldValue> {
  const entries: [string, FieldValue | undefined][] = [
    ["version", spec.targetVersion === "" ? undefined : spec.targetVersion],
    ["batches", spec.ramp === undefined ? batchesText(spec) : undefined],
    ["threshold", spec.failureThresholdPercent],
    ["concurrency", positive(spec.concurrency)],
    ["on-breach", ON_BREACH_WORDS[spec.onBreach]],
    ["disruption-budget", spec.disruptionBudgetPercent],
    ["selector", map(spec.selector?.labels ?? {})],
    ["pool", list(spec.selector?.pools ?? [])],
    ["node", list(spec.selector?.nodeIds ?? [])],
    ["exclude-node", list(spec.exclude?.nodeIds ?? [])],
    ["exclude-tag", map(spec.exclude?.tags ?? {})],
    ["reconnect-timeout", duration(spec.reconnectTimeout)],
    ["config-grace", duration(spec.configGrace)],
    ["soak", duration(spec.soak)],
    ["progress-deadline", duration(spec.progressDeadline)],
    ["max-failures", maxFailuresText(spec)],
    ["min-canaries", positive(spec.minCanaries)],
    ["max-downloads", positive(spec.maxDownloads)],
    ["max-defer", duration(spec.maxDefer)],
    ["reason", spec.reason === "" ? undefined : spec.reason],
    ["window", list(spec.windows)],
    ...rampFields(spec),
    ["gate", list(spec.gates)],
    ["gate-grace", duration(spec.gateGrace)],
  ];
  const out: Record<string, FieldValue> = {};
  for (const [name, value] of entries) if (value !== undefined) out[name] = value;
  return out;
}
