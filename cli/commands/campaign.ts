/**
 * `agentctl campaign …`: plan, start and steer campaigns through CampaignService.
 */

import type { DescMessage, MessageShape } from "@bufbuild/protobuf";
import {
  AbortCampaignResponseSchema,
  type Campaign,
  CampaignPhaseSchema,
  ListCampaignsResponseSchema,
  PauseCampaignResponseSchema,
  PlanCampaignResponseSchema,
  ResumeCampaignResponseSchema,
  StartCampaignResponseSchema,
} from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import {
  boolFlag,
  expectPositionals,
  type FlagSpecs,
  listFlag,
  type ParsedArgs,
  parseInteger,
  stringFlag,
  UsageError,
} from "../args.js";
import type { Command, CommandGroup, Context } from "../command.js";
import { CONFIRM_DETAILS, confirmChange, YES_FLAG } from "../confirm.js";
import { FILE_FLAG } from "../flag-file.js";
import { enumNames, enumValue, messageJson } from "../output.js";
import { specFromFlagsOrFile } from "./campaign-file.js";
import { formatCampaignTable, formatPlan, phaseName, thresholdOfSpec } from "./campaign-format.js";
import { retryCommand } from "./campaign-retry.js";
import { showCommand } from "./campaign-show.js";
import { skipGateCommand } from "./campaign-skip-gate.js";
import { SPEC_FLAGS } from "./campaign-spec.js";
import { watchCommand } from "./campaign-watch.js";
import { whyCommand } from "./campaign-why.js";

function reportStarted(ctx: Context, campaign: Campaign | undefined, verb: string): void {
  if (campaign === undefined) throw new Error("Control answered without a campaign");
  ctx.stdout.write(`${campaign.id}\n`);
  ctx.stderr.write(
    `campaign ${campaign.id} ${verb}: agent ${campaign.spec?.targetVersion ?? "?"} to ${campaign.nodeCount} node(s) in ${campaign.batches.length} batch(es); follow it with: agentctl campaign watch ${campaign.id}\n`,
  );
}

const FILE_DETAILS =
  "-f FILE takes the spec from a YAML or JSON file whose fields are these flags' names\n" +
  "(version, batches, threshold, on-breach, selector, window, gate, …), or from what\n" +
  "`campaign show ID -o yaml` printed; no spec flag may be given beside it.";

const plan: Command = {
  summary: "Show the batches a campaign would run, without starting anything",
  flags: { ...SPEC_FLAGS, ...FILE_FLAG },
  details: `With --json the output is a PlanCampaignResponse. --output wide lists every node.\n${FILE_DETAILS}`,
  async run(ctx, { values, positionals }) {
    expectPositionals(positionals, []);
    const spec = await specFromFlagsOrFile(values);
    const response = await (await ctx.clients()).campaigns.planCampaign(
      { spec },
      { signal: ctx.signal },
    );
    ctx.stdout.write(
      ctx.output === "json"
        ? messageJson(PlanCampaignResponseSchema, response)
        : formatPlan(spec.targetVersion, response, ctx.output === "wide", thresholdOfSpec(spec)),
    );
    return 0;
  },
};

const start: Command = {
  summary: "Start a campaign; prints its id",
  flags: { ...SPEC_FLAGS, ...FILE_FLAG, ...YES_FLAG },
  details:
    "On a terminal, the plan is shown and a y/N confirmation asked unless --yes is given;\n" +
    "without a terminal (scripts, CI) nothing starts without --yes (exit 2).\n" +
    `Prints the campaign id alone on stdout; with --json a StartCampaignResponse.\n${FILE_DETAILS}`,
  async run(ctx, { values, positionals }) {
    expectPositionals(positionals, []);
    const spec = await specFromFlagsOrFile(values);
    const campaigns = async () => (await ctx.clients()).campaigns;
    let total = 0;
    await confirmChange(ctx, values, {
      verb: "start",
      refused: "not started",
      preview: async () => {
        const planned = await (await campaigns()).planCampaign({ spec }, { signal: ctx.signal });
        total = planned.totalNodes;
        ctx.stderr.write(formatPlan(spec.targetVersion, planned, false, thresholdOfSpec(spec)));
      },
      get question() {
        return `Start upgrading ${total} node(s) to ${spec.targetVersion}?`;
      },
    });
    const response = await (await campaigns()).startCampaign({ spec }, { signal: ctx.signal });
    if (ctx.output === "json") {
      ctx.stdout.write(messageJson(StartCampaignResponseSchema, response));
    } else {
      reportStarted(ctx, response.campaign, "started");
    }
    return 0;
  },
};

const list: Command = {
  summary: "List campaigns, newest first",
  flags: {
    phase: {
      type: "string",
      multiple: true,
      value: "PHASE",
      description: `only campaigns in this phase (repeatable): ${enumNames(CampaignPhaseSchema).join(", ")}`,
    },
    node: { type: "string", value: "ID", description: "only campaigns that include this node" },
    "page-size": { type: "string", value: "N", description: "campaigns per page" },
    "page-token": { type: "string", value: "TOKEN", description: "continue from a previous page" },
  },
  details: "With --json the output is a ListCampaignsResponse.",
  async run(ctx, { values, positionals }) {
    expectPositionals(positionals, []);
    const phases = listFlag(values, "phase").map((p) => {
      const value = enumValue(CampaignPhaseSchema, p);
      if (value === undefined || value === 0) {
        throw new UsageError(
          `invalid value "${p}" for --phase: expected ${enumNames(CampaignPhaseSchema).join(", ")}`,
        );
      }
      return value;
    });
    const pageSize = stringFlag(values, "page-size");
    const response = await (await ctx.clients()).campaigns.listCampaigns(
      {
        phases,
        nodeId: stringFlag(values, "node") ?? "",
        pageSize: pageSize === undefined ? 0 : parseInteger(pageSize, "page-size", 1, 1000),
        pageToken: stringFlag(values, "page-token") ?? "",
      },
      { signal: ctx.signal },
    );
    if (ctx.output === "json") {
      ctx.stdout.write(messageJson(ListCampaignsResponseSchema, response));
      return 0;
    }
    if (response.campaigns.length === 0) {
      ctx.stderr.write("No campaigns.\n");
      return 0;
    }
    ctx.stdout.write(formatCampaignTable(response.campaigns));
    if (response.nextPageToken !== "") {
      ctx.stderr.write(`more with --page-token ${response.nextPageToken}\n`);
    }
    return 0;
  },
};

const REASON = {
  reason: { type: "string", value: "TEXT", description: "why, for the audit log" },
} as const;

type Values = ParsedArgs["values"];

/** How a steering command asks before it changes a campaign. */
interface Steer {
  readonly verb: string;
  readonly refused: string;
  question(id: string, values: Values): string;
}

/** A command that acts on one campaign and prints its new phase (or the response as JSON). */
function control<S extends DescMessage>(
  summary: string,
  verb: string,
  schema: S,
  steer: Steer,
  call: (
    ctx: Context,
    id: string,
    values: Values,
  ) => Promise<MessageShape<S> & { campaign?: Campaign | undefined }>,
  extraFlags: FlagSpecs = {},
  note: (campaign: Campaign) => string | undefined = () => undefined,
): Command {
  return {
    summary,
    args: "ID",
    flags: { ...REASON, ...YES_FLAG, ...extraFlags },
    details: `${CONFIRM_DETAILS}\nWith --json the output is a ${schema.name}.`,
    async run(ctx, { values, positionals }) {
      const [id = ""] = expectPositionals(positionals, ["ID"]);
      await confirmChange(ctx, values, {
        verb: steer.verb,
        refused: steer.refused,
        question: steer.question(id, values),
      });
      const response = await call(ctx, id, values);
      const phase = response.campaign === undefined ? "?" : phaseName(response.campaign.phase);
      if (ctx.output === "json") {
        ctx.stdout.write(messageJson(schema, response));
        return 0;
      }
      ctx.stdout.write(`campaign ${id} ${verb}; phase ${phase}\n`);
      const extra = response.campaign === undefined ? undefined : note(response.campaign);
      if (extra !== undefined) ctx.stdout.write(`${extra}\n`);
      return 0;
    },
  };
}

/** What `abort --rollback` rolls back and what it does not, and the way back for the rest. */
const ROLLBACK_DETAILS =
  "--rollback rolls back only the current batch: its nodes that upgraded or are upgrading go\n" +
  "back to their previous release. It is no whole-campaign rollback: the nodes of batches that\n" +
  "passed stay on the target, confirmed there, and an agent refuses any release below its\n" +
  "confirmed sequence (rollback protection), so a campaign back to the old version skips them\n" +
  "(ahead_of_target). To take them back, register the old code under a new version with a\n" +
  "higher sequence and roll forward to it with a new campaign (operator guide §6).";

/** `command` with `extra` printed in its help before its own details. */
function withDetails(extra: string, command: Command): Command {
  return { ...command, details: `${extra}\n${command.details ?? ""}` };
}

/** The `created_by` prefix of a desired version's convergence campaigns. */
const CONVERGENCE_CREATOR = "convergence:";

/**
 * What aborting a convergence campaign means beyond the campaign: its desired version's
 * convergence halts until an operator sets that desired version again.
 */
function convergenceAbortNote(campaign: Campaign): string | undefined {
  if (!campaign.createdBy.startsWith(CONVERGENCE_CREATOR)) return undefined;
  const desiredId = campaign.createdBy.slice(CONVERGENCE_CREATOR.length);
  return `convergence of the desired version ${desiredId} is halted: it starts no new campaign until \`agentctl desired set\` sets it again`;
}

const reasonOf = (values: Values): string => stringFlag(values, "reason") ?? "";

/** The `campaign` command group. */
export const campaignGroup: CommandGroup = {
  name: "campaign",
  summary: "Plan, start, watch and steer upgrade campaigns",
  commands: {
    plan,
    start,
    list,
    show: showCommand,
    watch: watchCommand,
    why: whyCommand,
    pause: control(
      "Stop new offers and new batches (in-flight nodes are still judged)",
      "paused",
      PauseCampaignResponseSchema,
      {
        verb: "pause",
        refused: "not paused",
        question: (id) => `Pause campaign ${id} (no new offers, no new batches)?`,
      },
      async (ctx, id, values) =>
        (await ctx.clients()).campaigns.pauseCampaign(
          { id, reason: reasonOf(values) },
          { signal: ctx.signal },
        ),
    ),
    resume: control(
      "Continue a paused campaign (paused time does not count toward a batch)",
      "resumed",
      ResumeCampaignResponseSchema,
      {
        verb: "resume",
        refused: "not resumed",
        question: (id) => `Resume campaign ${id}?`,
      },
      async (ctx, id, values) =>
        (await ctx.clients()).campaigns.resumeCampaign(
          { id, reason: reasonOf(values) },
          { signal: ctx.signal },
        ),
    ),
    abort: withDetails(
      ROLLBACK_DETAILS,
      control(
        "End a campaign; with --rollback its current batch is rolled back first (a convergence campaign also halts its desired version)",
        "aborted",
        AbortCampaignResponseSchema,
        {
          verb: "abort",
          refused: "not aborted",
          question: (id, values) =>
            `Abort campaign ${id}${boolFlag(values, "rollback") ? " and roll back its current batch" : ""}?`,
        },
        async (ctx, id, values) =>
          (await ctx.clients()).campaigns.abortCampaign(
            { id, rollback: boolFlag(values, "rollback"), reason: reasonOf(values) },
            { signal: ctx.signal },
          ),
        {
          rollback: {
            type: "boolean",
            description:
              "roll back only the current batch first (its upgraded and upgrading nodes); batches that passed stay on the target",
          },
        },
        convergenceAbortNote,
      ),
    ),
    retry: retryCommand,
    "skip-gate": skipGateCommand,
  },
};
