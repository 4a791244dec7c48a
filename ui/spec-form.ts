/**
 * The start form's fields, as text, turned into the CampaignSpec `agentctl campaign start`
 * would send for the same flags. Only the shape of each value is checked here (a field with
 * a typo is named at once); everything else — whether the release exists, the policy, the
 * windows' and gates' grammar — is Control's to judge, and its error is shown as it words it.
 * An empty field stays unset, so Control applies its configured default. Pure.
 */
import type { MessageInitShape } from "@bufbuild/protobuf";
import { parseRamp, parseRate } from "../control/campaign/ramp.js";
import { MAX_DOWNLOADS, MAX_MAX_DEFER_MS } from "../control/campaign/spec.js";
import {
  type CampaignSpecSchema,
  OnBreach,
} from "../proto/gen/agentcontrol/admin/v1/campaign_pb.js";

/** Every field of the form, as typed. */
export interface SpecFields {
  version: string;
  reason: string;
  /** `k=v` pairs, separated by commas or spaces. */
  selector: string;
  /** Pool names, separated by commas or spaces. */
  pools: string;
  nodes: string;
  excludeNodes: string;
  excludeTags: string;
  /** `PERCENT[:DURATION],…` as `--batches`. */
  batches: string;
  /** `RATE×FACTOR` as `--ramp`; with `rampMax` (`RATE`) and `rampStep` (a duration). */
  ramp: string;
  rampMax: string;
  rampStep: string;
  threshold: string;
  concurrency: string;
  /** rollback, pause or stop; empty: Control's default (rollback). */
  onBreach: string;
  disruptionBudget: string;
  /** One window per line, as `--window`. */
  windows: string;
  /** One gate per line, as `--gate`. */
  gates: string;
  gateGrace: string;
  reconnectTimeout: string;
  configGrace: string;
  soak: string;
  progressDeadline: string;
  /** `N` as `--max-downloads` (1 to 1,000,000 nodes downloading at once). */
  maxDownloads: string;
  /** A duration as `--max-defer` (at most 168h). */
  maxDefer: string;
}

/** An empty form. */
export const EMPTY_FIELDS: SpecFields = {
  version: "",
  reason: "",
  selector: "",
  pools: "",
  nodes: "",
  excludeNodes: "",
  excludeTags: "",
  batches: "",
  ramp: "",
  rampMax: "",
  rampStep: "",
  threshold: "",
  concurrency: "",
  onBreach: "",
  disruptionBudget: "",
  windows: "",
  gates: "",
  gateGrace: "",
  reconnectTimeout: "",
  configGrace: "",
  soak: "",
  progressDeadline: "",
  maxDownloads: "",
  maxDefer: "",
};

/** A spec as the Connect client takes it. */
export type SpecInit = MessageInitShape<typeof CampaignSpecSchema>;

/** The spec, or the first field that cannot be read and why. */
export type SpecParse =
  | { readonly ok: true; readonly spec: SpecInit }
  | { readonly ok: false; readonly field: keyof SpecFields; readonly message: string };

class FieldError extends Error {
  constructor(
    readonly field: keyof SpecFields,
    message: string,
  ) {
    super(message);
  }
}

const words = (text: string) => text.split(/[\s,]+/).filter((w) => w !== "");
const lines = (text: string) =>
  text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "");

function pairs(field: keyof SpecFields, text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of words(text)) {
    const eq = item.indexOf("=");
    if (eq <= 0) throw new FieldError(field, `"${item}" is not key=value`);
    out[item.slice(0, eq)] = item.slice(eq + 1);
  }
  return out;
}

const DURATION = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/;

/** `30m`, `1h30m`, `45s`, `0s` as a Duration; an empty field as undefined. */
function duration(field: keyof SpecFields, text: string) {
  const t = text.trim();
  if (t === "") return undefined;
  const m = DURATION.exec(t);
  if (m === null) throw new FieldError(field, `"${t}" is not a duration such as 30m, 1h30m or 45s`);
  const [, h = "0", min = "0", s = "0"] = m;
  return { seconds: BigInt((Number(h) * 60 + Number(min)) * 60 + Number(s)), nanos: 0 };
}

function whole(field: keyof SpecFields, text: string, max: number): number | undefined {
  const t = text.trim();
  if (t === "") return undefined;
  if (!/^\d+$/.test(t) || Number(t) > max)
    throw new FieldError(field, `"${t}" is not a whole number from 0 to ${max}`);
  return Number(t);
}

/** A whole number from `min` to `max` (as `agentctl`'s integer flags), or undefined when empty. */
function bounded(field: keyof SpecFields, text: string, min: number, max: number) {
  const t = text.trim();
  if (t === "") return undefined;
  if (!/^\d+$/.test(t) || Number(t) < min || Number(t) > max)
    throw new FieldError(field, `"${t}" is not a whole number from ${min} to ${max}`);
  return Number(t);
}

/** `--max-defer`: a duration of at most seven days. */
function maxDeferOf(text: string) {
  const d = duration("maxDefer", text);
  if (d !== undefined && Number(d.seconds) * 1000 > MAX_MAX_DEFER_MS)
    throw new FieldError("maxDefer", `"${text.trim()}" is more than 168h (7 days)`);
  return d;
}

function batchesOf(text: string): NonNullable<SpecInit["batches"]> {
  return words(text).map((part) => {
    const [percent = "", time, extra] = part.split(":");
    if (extra !== undefined || !/^\d+$/.test(percent))
      throw new FieldError("batches", `"${part}" is not PERCENT[:DURATION], e.g. 5:30m`);
    const minDuration = time === undefined ? undefined : duration("batches", time);
    return { percent: Number(percent), ...(minDuration ? { minDuration } : {}) };
  });
}

function rampOf(f: SpecFields): SpecInit["ramp"] {
  if (f.ramp.trim() === "") {
    if (f.rampMax.trim() !== "" || f.rampStep.trim() !== "")
      throw new FieldError("ramp", "a ramp maximum or step needs a ramp");
    return undefined;
  }
  if (f.batches.trim() !== "")
    throw new FieldError("ramp", "a ramp replaces the batches: give one or the other");
  const parsed = parseRamp(f.ramp.trim());
  if (!parsed.ok) throw new FieldError("ramp", parsed.message);
  let maxPerMinute = 0;
  if (f.rampMax.trim() !== "") {
    const max = parseRate(f.rampMax.trim());
    if (!max.ok) throw new FieldError("rampMax", max.message);
    maxPerMinute = max.value;
  }
  const step = duration("rampStep", f.rampStep);
  return { ...parsed.value, maxPerMinute, ...(step ? { step } : {}) };
}

const ON_BREACH: Readonly<Record<string, OnBreach>> = {
  rollback: OnBreach.ROLLBACK,
  pause: OnBreach.PAUSE,
  stop: OnBreach.STOP,
};

/** The spec the fields describe (see the file's TSDoc). */
export function specFromFields(f: SpecFields): SpecParse {
  try {
    const version = f.version.trim();
    if (version === "") throw new FieldError("version", "the target version is required");
    const spec: SpecInit = {
      targetVersion: version,
      reason: f.reason.trim(),
      selector: {
        labels: pairs("selector", f.selector),
        pools: words(f.pools),
        nodeIds: words(f.nodes),
      },
      exclude: { nodeIds: words(f.excludeNodes), tags: pairs("excludeTags", f.excludeTags) },
      batches: batchesOf(f.batches),
      concurrency: whole("concurrency", f.concurrency, 1_000_000) ?? 0,
      onBreach:
        f.onBreach === "" ? OnBreach.UNSPECIFIED : (ON_BREACH[f.onBreach] ?? OnBreach.UNSPECIFIED),
      windows: lines(f.windows),
      gates: lines(f.gates),
    };
    const threshold = whole("threshold", f.threshold, 100);
    if (threshold !== undefined) spec.failureThresholdPercent = threshold;
    const budget = whole("disruptionBudget", f.disruptionBudget, 100);
    if (budget !== undefined) spec.disruptionBudgetPercent = budget;
    const ramp = rampOf(f);
    if (ramp) spec.ramp = ramp;
    const maxDownloads = bounded("maxDownloads", f.maxDownloads, 1, MAX_DOWNLOADS);
    if (maxDownloads !== undefined) spec.maxDownloads = maxDownloads;
    const maxDefer = maxDeferOf(f.maxDefer);
    if (maxDefer) spec.maxDefer = maxDefer;
    const times = {
      gateGrace: duration("gateGrace", f.gateGrace),
      reconnectTimeout: duration("reconnectTimeout", f.reconnectTimeout),
      configGrace: duration("configGrace", f.configGrace),
      soak: duration("soak", f.soak),
      progressDeadline: duration("progressDeadline", f.progressDeadline),
    };
    for (const [k, v] of Object.entries(times)) if (v) Object.assign(spec, { [k]: v });
    return { ok: true, spec };
  } catch (e) {
    if (e instanceof FieldError) return { ok: false, field: e.field, message: e.message };
    throw e;
  }
}
