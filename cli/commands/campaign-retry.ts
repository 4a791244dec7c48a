/**
 * `agentctl campaign retry ID`: a new campaign over the nodes of an ended campaign that did not
 * end on its target, with its settings unless flags change some (the flags of `campaign start`
 * that are settings, parsed and checked by the same code; Control admits the retry as a start).
 */
import { create } from "@bufbuild/protobuf";
import { FieldMaskSchema } from "@bufbuild/protobuf/wkt";
import {
  type Campaign,
  type CampaignSpec,
  RetryCampaignResponseSchema,
} from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import {
  expectPositionals,
  type FlagSpecs,
  type FlagValues,
  listFlag,
  stringFlag,
} from "../args.js";
import type { Command, Context } from "../command.js";
import { CONFIRM_DETAILS, confirmChange, YES_FLAG } from "../confirm.js";
import { messageJson } from "../output.js";
import { SPEC_FLAGS, specFromFlags } from "./campaign-spec.js";

/**
 * The flags of `campaign start` a retry may give, each with the CampaignSpec field it sets
 * (the path of `RetryCampaignRequest.settings_mask`); `max-failures` names its oneof's field.
 */
const SETTINGS: Readonly<Record<string, string>> = {
  batches: "batches",
  threshold: "failure_threshold_percent",
  concurrency: "concurrency",
  "on-breach": "on_breach",
  "disruption-budget": "disruption_budget_percent",
  "reconnect-timeout": "reconnect_timeout",
  "config-grace": "config_grace",
  soak: "soak",
  "progress-deadline": "progress_deadline",
  "max-failures": "max_failures",
  "min-canaries": "min_canaries",
  "max-downloads": "max_downloads",
  "max-defer": "max_defer",
  window: "windows",
  ramp: "ramp",
  "ramp-max": "ramp",
  "ramp-step": "ramp",
  gate: "gates",
  "gate-grace": "gate_grace",
};

const SETTING_FLAGS: FlagSpecs = Object.fromEntries(
  Object.keys(SETTINGS).map((name) => [name, SPEC_FLAGS[name] as FlagSpecs[string]]),
);

/** True when the flag was given (a repeatable one at least once). */
function given(values: FlagValues, flag: string): boolean {
  return listFlag(values, flag).length > 0;
}

/**
 * The settings the flags change and their mask: the spec `campaign start` would build from the
 * same flags (every value checked there), keeping only the fields given.
 */
function settingsFromFlags(values: FlagValues): { settings: CampaignSpec; paths: string[] } {
  const flags = Object.keys(SETTINGS).filter((flag) => given(values, flag));
  // The spec's target is the retried campaign's: a placeholder satisfies the start's parser
  // and is cleared, with every field that is not a setting, before it is sent.
  const only: Record<string, FlagValues[string]> = { version: "0.0.0" };
  for (const flag of flags) only[flag] = values[flag];
  const settings = specFromFlags(only);
  settings.targetVersion = "";
  settings.selector = undefined;
  settings.exclude = undefined;
  const paths = new Set<string>();
  for (const flag of flags) {
    const path = SETTINGS[flag] as string;
    paths.add(
      path !== "max_failures"
        ? path
        : settings.maxFailures.case === "maxFailuresPercent"
          ? "max_failures_percent"
          : "max_failures_count",
    );
  }
  return { settings, paths: [...paths] };
}

function reportStarted(ctx: Context, campaign: Campaign | undefined, id: string): void {
  if (campaign === undefined) throw new Error("Control answered without a campaign");
  ctx.stdout.write(`${campaign.id}\n`);
  ctx.stderr.write(
    `campaign ${campaign.id} started (retry of ${id}): agent ${campaign.spec?.targetVersion ?? "?"} to ${campaign.nodeCount} node(s) in ${campaign.batches.length} batch(es); follow it with: agentctl campaign watch ${campaign.id}\n`,
  );
}

/** The `campaign retry` command. */
export const retryCommand: Command = {
  summary:
    "Start a new campaign over the nodes that failed, timed out, were skipped, canceled or rolled back, optionally with other settings",
  args: "ID",
  flags: {
    reason: { type: "string", value: "TEXT", description: "why, for the audit log" },
    "exclude-node": {
      type: "string",
      multiple: true,
      value: "ID",
      description: "leave this node out (repeatable)",
    },
    ...SETTING_FLAGS,
    ...YES_FLAG,
  },
  details:
    `${CONFIRM_DETAILS}\n` +
    "Every other setting is the retried campaign's; a setting given here replaces it as\n" +
    "`campaign start` takes it (--batches drops a ramp, --ramp drops the batches).\n" +
    "Prints the new campaign's id; with --json a RetryCampaignResponse.",
  async run(ctx, { values, positionals }) {
    const [id = ""] = expectPositionals(positionals, ["ID"]);
    const { settings, paths } = settingsFromFlags(values);
    const changes = Object.keys(SETTINGS)
      .filter((flag) => given(values, flag))
      .map((flag) => `--${flag} ${listFlag(values, flag).join(" ")}`.trimEnd());
    await confirmChange(ctx, values, {
      verb: "retry",
      refused: "not retried",
      question: `Start a new campaign over the nodes of campaign ${id} that did not end on its target${changes.length > 0 ? ` (${changes.join(", ")})` : ""}?`,
    });
    const response = await (await ctx.clients()).campaigns.retryCampaign(
      {
        id,
        excludeNodeIds: listFlag(values, "exclude-node"),
        reason: stringFlag(values, "reason") ?? "",
        ...(paths.length === 0
          ? {}
          : { settings, settingsMask: create(FieldMaskSchema, { paths }) }),
      },
      { signal: ctx.signal },
    );
    if (ctx.output === "json") ctx.stdout.write(messageJson(RetryCampaignResponseSchema, response));
    else reportStarted(ctx, response.campaign, id);
    return 0;
  },
};
