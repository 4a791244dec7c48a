/**
 * `agentctl campaign show ID`: a campaign in one screen whatever its size. By default a
 * summary (phase, spec, batches, counts by node state, what the batch waits for, the first
 * few failed nodes by name); the node rows only with `--nodes` or a `--state` filter, page by
 * page, so a campaign of 10,000 nodes prints them only when asked.
 */
import { create } from "@bufbuild/protobuf";
import {
  type Campaign,
  type CampaignNode,
  GetCampaignResponseSchema,
  NodeState,
  NodeStateSchema,
} from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import type { CampaignWait } from "../../proto/gen/agentcontrol/admin/v1/campaign_waits_pb.js";
import { boolFlag, expectPositionals, listFlag, UsageError } from "../args.js";
import type { Command, Context } from "../command.js";
import { enumNames, enumValue, formatTable, messageJson } from "../output.js";
import {
  countOf,
  FINAL_PHASES,
  formatBatchTable,
  formatCampaignNodes,
  formatCampaignSummary,
  stateName,
} from "./campaign-format.js";

/** Rows per ListCampaignNodes call when `show` pages through a campaign's nodes. */
const NODE_PAGE = 1000;

/** How many failed nodes the summary names. */
export const NAMED_FAILURES = 5;

/** The node states the summary counts and names as failures. */
export const FAILURE_STATES: readonly NodeState[] = [
  NodeState.FAILED,
  NodeState.TIMED_OUT,
  NodeState.ROLLBACK_FAILED,
];

/** How many of the campaign's nodes are in a {@link FAILURE_STATES failure state}. */
export function failureCount(campaign: Campaign): number {
  return FAILURE_STATES.reduce((sum, s) => sum + countOf(campaign.counts, s), 0);
}

/**
 * The `--state` values as node states: each flag may repeat and may hold a comma list
 * (`--state failed,timed_out`).
 * @throws UsageError naming the first value that is no node state
 */
export function parseStates(values: readonly string[]): NodeState[] {
  const names = values.flatMap((v) => v.split(",")).map((v) => v.trim());
  return names.map((name) => {
    const value = enumValue(NodeStateSchema, name);
    if (value === undefined || value === 0) {
      throw new UsageError(
        `invalid value "${name}" for --state: expected ${enumNames(NodeStateSchema).join(", ")}`,
      );
    }
    return value as NodeState;
  });
}

/**
 * The summary's lines after the batch table: what the current batch waits for (a campaign
 * still running or paused), then up to {@link NAMED_FAILURES} failed nodes by name with how
 * many more there are and the command that lists them all, then how to list every node.
 */
export function formatSummaryTail(
  campaign: Campaign,
  failures: readonly CampaignNode[],
  waits: readonly CampaignWait[] | undefined,
): string {
  const out: string[] = [];
  if (waits !== undefined && waits.length > 0) {
    out.push("Waits for:", ...waits.map((w) => `  - ${w.text}`));
  }
  const failed = failureCount(campaign);
  if (failed > 0) {
    if (out.length > 0) out.push("");
    out.push(`Failures: ${failed}`);
    const rows = failures
      .slice(0, NAMED_FAILURES)
      .map((n) => [`  ${n.nodeId}`, stateName(n.state), n.code || "-", n.message || "-"]);
    out.push(formatTable(["  NODE", "STATE", "CODE", "MESSAGE"], rows).trimEnd());
    const more = failed - rows.length;
    const states = FAILURE_STATES.map(stateName).join(",");
    out.push(
      more > 0
        ? `  … and ${more} more: agentctl campaign show ${campaign.id} --state ${states}`
        : `  listed with: agentctl campaign show ${campaign.id} --state ${states}`,
    );
  }
  if (out.length > 0) out.push("");
  out.push(`Every node: agentctl campaign show ${campaign.id} --nodes`);
  return `${out.join("\n")}\n`;
}

/** Every node row in `states` (all states when empty), page by page, at most `limit`. */
async function listNodes(
  ctx: Context,
  campaignId: string,
  states: readonly NodeState[],
  limit = Number.POSITIVE_INFINITY,
): Promise<CampaignNode[]> {
  const client = (await ctx.clients()).campaigns;
  const nodes: CampaignNode[] = [];
  let pageToken = "";
  while (nodes.length < limit) {
    const page = await client.listCampaignNodes(
      { campaignId, states: [...states], pageSize: Math.min(NODE_PAGE, limit), pageToken },
      { signal: ctx.signal },
    );
    nodes.push(...page.nodes);
    if (page.nextPageToken === "") break;
    pageToken = page.nextPageToken;
  }
  return nodes.slice(0, limit);
}

/** The `campaign show` command. */
export const showCommand: Command = {
  summary: "Show a campaign: its summary and batches; its nodes with --nodes or --state",
  args: "ID",
  flags: {
    nodes: { type: "boolean", description: "list a row per node (every node)" },
    state: {
      type: "string",
      multiple: true,
      value: "STATE",
      description: `list only the node rows in these states (repeatable, or a comma list): ${enumNames(NodeStateSchema).join(", ")}`,
    },
    summary: {
      type: "boolean",
      description: "the summary alone (the default; kept for scripts that pass it)",
    },
  },
  details:
    "The summary counts nodes by state, says what the current batch waits for (as `campaign why`)\n" +
    "and names the first few failed nodes. Node rows come page by page (ListCampaignNodes), so a\n" +
    "campaign of any size is shown; --output wide adds pool, times and operation ids to them.\n" +
    "With --json or -o yaml: {campaign, nodes} (nodes only with --nodes or --state), in the\n" +
    "tables' words; its campaign.spec is a file `campaign start -f` accepts.",
  async run(ctx, { values, positionals }) {
    const [id = ""] = expectPositionals(positionals, ["ID"]);
    const states = parseStates(listFlag(values, "state"));
    if (boolFlag(values, "summary") && (boolFlag(values, "nodes") || states.length > 0)) {
      throw new UsageError("--summary leaves the node rows out: drop it, or --nodes and --state");
    }
    const listing = boolFlag(values, "nodes") || states.length > 0;
    const clients = await ctx.clients();
    const { campaign } = await clients.campaigns.getCampaign(
      { id, summaryOnly: true },
      { signal: ctx.signal },
    );
    if (campaign === undefined) throw new Error("Control answered without a campaign");
    const nodes = listing ? await listNodes(ctx, id, states) : [];
    if (ctx.output === "json") {
      ctx.stdout.write(
        messageJson(
          GetCampaignResponseSchema,
          create(GetCampaignResponseSchema, { campaign, nodes }),
        ),
      );
      return 0;
    }
    ctx.stdout.write(
      `${formatCampaignSummary(campaign, ctx.output === "wide")}\n${formatBatchTable(campaign)}`,
    );
    if (listing) {
      ctx.stdout.write(
        nodes.length > 0
          ? `\n${formatCampaignNodes(campaign, nodes, ctx.output === "wide")}`
          : "\nNo node in those states.\n",
      );
      return 0;
    }
    const failures =
      failureCount(campaign) > 0 ? await listNodes(ctx, id, FAILURE_STATES, NAMED_FAILURES) : [];
    const waits = FINAL_PHASES.has(campaign.phase)
      ? undefined
      : (await clients.campaignWaits.getCampaignWaits({ id }, { signal: ctx.signal })).waits;
    ctx.stdout.write(`\n${formatSummaryTail(campaign, failures, waits)}`);
    return 0;
  },
};
