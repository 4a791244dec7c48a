/**
 * The flags of `desired set` and how they become a SetDesiredVersionRequest, from the command
 * line or from a file (`desired set -f desired.yaml`, its fields the flags' names). A file may
 * also be a desired version as `desired set -o yaml` prints it (or one entry of `desired list
 * -o yaml`): its target, selector, exclusions and limits are read as the flags they stand for,
 * and what Control keeps about it (id, set by and at, halt, counts) is ignored.
 */
import { isSemver } from "../../control/shared/release/semver.js";
import { DesiredVersionSchema } from "../../proto/gen/agentcontrol/admin/v1/rollout_pb.js";
import {
  type FlagSpecs,
  type FlagValues,
  listFlag,
  parseInteger,
  parseKeyValues,
  parsePercent,
  requiredFlag,
  stringFlag,
  UsageError,
} from "../args.js";
import {
  asFileError,
  flagValuesFromFields,
  isMapping,
  readFieldFile,
  refuseFlagsBesideFile,
} from "../flag-file.js";
import { didYouMean } from "../suggest.js";

/** The fields of `desired set`: its flags and a file's fields alike. */
export const DESIRED_FLAGS: FlagSpecs = {
  version: { type: "string", value: "V", description: "a registered release (required)" },
  selector: {
    type: "string",
    multiple: true,
    value: "KEY=VALUE",
    description: "only nodes with this label (repeatable)",
  },
  pool: {
    type: "string",
    multiple: true,
    value: "POOL",
    description: "only this pool (repeatable)",
  },
  node: { type: "string", multiple: true, value: "ID", description: "only this node (repeatable)" },
  "exclude-node": {
    type: "string",
    multiple: true,
    value: "ID",
    description: "leave this node out",
  },
  "exclude-tag": {
    type: "string",
    multiple: true,
    value: "KEY=VALUE",
    description: "leave out nodes with this label",
  },
  "max-failures": {
    type: "string",
    value: "N",
    description: "failed nodes that halt convergence (default 3)",
  },
  "disruption-budget": {
    type: "string",
    value: "PERCENT",
    description: "at most this share of each pool converging at once (default 5)",
  },
  reason: { type: "string", value: "TEXT", description: "why, for the audit log" },
};

/** What `desired set` sends (a SetDesiredVersionRequest's fields). */
export interface DesiredRequest {
  readonly targetVersion: string;
  readonly selector: { labels: Record<string, string>; pools: string[]; nodeIds: string[] };
  readonly exclude: { nodeIds: string[]; tags: Record<string, string> };
  readonly maxFailures?: number;
  readonly disruptionBudgetPercent?: number;
  readonly reason: string;
}

/** Builds the request the flags describe; every value checked here first. */
export function desiredFromFlags(values: FlagValues): DesiredRequest {
  const version = requiredFlag(values, "version");
  if (!isSemver(version)) {
    throw new UsageError(
      `invalid --version "${version}": expected a semantic version such as 1.4.0`,
    );
  }
  const maxFailures = stringFlag(values, "max-failures");
  const budget = stringFlag(values, "disruption-budget");
  return {
    targetVersion: version,
    selector: {
      labels: parseKeyValues(listFlag(values, "selector"), "selector"),
      pools: listFlag(values, "pool"),
      nodeIds: listFlag(values, "node"),
    },
    exclude: {
      nodeIds: listFlag(values, "exclude-node"),
      tags: parseKeyValues(listFlag(values, "exclude-tag"), "exclude-tag"),
    },
    ...(maxFailures === undefined
      ? {}
      : { maxFailures: parseInteger(maxFailures, "max-failures", 1, 100) }),
    ...(budget === undefined
      ? {}
      : { disruptionBudgetPercent: parsePercent(budget, "disruption-budget") }),
    reason: stringFlag(values, "reason") ?? "",
  };
}

const SHOWN_KEYS = DesiredVersionSchema.fields.map((f) => f.jsonName);

/** A mapping's `key` as a list of text values, or undefined when absent. */
function textList(m: Record<string, unknown>, key: string): unknown {
  const v = m[key];
  return Array.isArray(v) && v.length === 0 ? undefined : v;
}

/**
 * The fields of a desired version as `desired set -o yaml` printed it (one with a
 * `targetVersion`), as `desired set`'s flag fields; any other document unchanged.
 * @throws UsageError naming a field a printed desired version does not have
 */
export function desiredFieldsOf(doc: unknown, source: string): unknown {
  if (!isMapping(doc) || !("targetVersion" in doc)) return doc;
  for (const key of Object.keys(doc)) {
    if (!SHOWN_KEYS.includes(key)) {
      throw new UsageError(`${source}: unknown field "${key}"${didYouMean(key, SHOWN_KEYS)}`);
    }
  }
  const selector = isMapping(doc.selector) ? doc.selector : {};
  const exclude = isMapping(doc.exclude) ? doc.exclude : {};
  const empty = (v: unknown) => v === undefined || (isMapping(v) && Object.keys(v).length === 0);
  const entries: [string, unknown][] = [
    ["version", doc.targetVersion],
    ["selector", empty(selector.labels) ? undefined : selector.labels],
    ["pool", textList(selector, "pools")],
    ["node", textList(selector, "nodeIds")],
    ["exclude-node", textList(exclude, "nodeIds")],
    ["exclude-tag", empty(exclude.tags) ? undefined : exclude.tags],
    ["max-failures", doc.maxFailures === "0" ? undefined : doc.maxFailures],
    ["disruption-budget", doc.disruptionBudgetPercent],
  ];
  return Object.fromEntries(entries.filter(([, v]) => v !== undefined));
}

/**
 * The request of `desired set`: from `-f FILE` when given (no field flag may be given beside
 * it), else from the flags.
 * @throws UsageError naming the file and the field at fault
 */
export async function desiredFromFlagsOrFile(values: FlagValues): Promise<DesiredRequest> {
  const file = stringFlag(values, "file");
  if (file === undefined) return desiredFromFlags(values);
  refuseFlagsBesideFile(values, DESIRED_FLAGS);
  const fields = desiredFieldsOf(await readFieldFile(file), file);
  const fileValues = flagValuesFromFields(fields, DESIRED_FLAGS, file);
  try {
    return desiredFromFlags(fileValues);
  } catch (error) {
    throw asFileError(error, file);
  }
}
