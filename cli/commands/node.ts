/**
 * `agentctl node list|show|disable|enable|reset|label|approve|revoke`: the node registry.
 */
import { create } from "@bufbuild/protobuf";
import {
  DisableNodeResponseSchema,
  EnableNodeResponseSchema,
  GetNodeResponseSchema,
  type ListNodesRequest,
  ListNodesRequestSchema,
  type ListNodesResponse,
  ListNodesResponseSchema,
  type Node,
  ResetNodeResponseSchema,
} from "../../proto/gen/agentcontrol/admin/v1/node_pb.js";
import {
  boolFlag,
  expectPositionals,
  type FlagValues,
  listFlag,
  parseInteger,
  parseKeyValues,
  stringFlag,
  UsageError,
} from "../args.js";
import type { CommandGroup, Context } from "../command.js";
import { CONFIRM_DETAILS, confirmChange, YES_FLAG } from "../confirm.js";
import {
  formatAge,
  formatFields,
  formatLabels,
  formatTable,
  formatTime,
  messageJson,
} from "../output.js";
import { nodeIdentityCommands } from "./node-identity.js";

/** The version `node list` filters on: `--version` or `--agent-version` (the same if both). */
function versionFilter(values: FlagValues): string {
  const a = stringFlag(values, "agent-version");
  const b = stringFlag(values, "version");
  if (a !== undefined && b !== undefined && a !== b)
    throw new UsageError(`--version ${b} and --agent-version ${a} differ: give one`);
  return a ?? b ?? "";
}

/** Column headers of `node list`; `wide` adds the rest. */
export const NODE_COLUMNS = [
  "NODE",
  "STATUS",
  "VERSION",
  "PLATFORM",
  "POOL",
  "CAMPAIGN",
  "LAST SEEN",
];
const WIDE_COLUMNS = [
  "CONTROL",
  "LABELS",
  "CAPABILITIES",
  "PREVIOUS",
  "CONFIRMED SEQ",
  "BOOT ID",
  "FIRST SEEN",
];

/**
 * `online`, `offline`, or `revoked` (cut off until it enrolls again, whatever its last
 * stream), with `,disabled` appended when the node is excluded from campaigns and `,frozen`
 * when its Agent reports its TUF metadata frozen (it refuses new releases).
 */
export function nodeStatus(node: Node): string {
  const state = node.revoked ? "revoked" : node.online ? "online" : "offline";
  return `${state}${node.enabled ? "" : ",disabled"}${node.trustFrozen ? ",frozen" : ""}`;
}

/** The node's agent version, `1.3.0 (yanked)` when its release is yanked; `-` for none. */
export function nodeVersion(node: Node): string {
  if (node.agentVersion === "") return "-";
  return node.agentVersionYanked ? `${node.agentVersion} (yanked)` : node.agentVersion;
}

/**
 * What `node reset` prints: for a node that enrolled by client certificate, that a reset
 * gives it no way back by itself and it needs a new certificate when its own is lost or
 * refused (it was revoked), with the command that issues one.
 */
export function resetText(node: Node | undefined, nodeId: string): string {
  if (node?.certificateEnrolled !== true) {
    return `node ${nodeId} reset: its node token no longer works; its next join-token enrollment is accepted once\n`;
  }
  const why = node.revoked
    ? "its certificate stays refused since the node was revoked, so it needs a new certificate"
    : "if it lost its key, it needs a new certificate";
  return `node ${nodeId} reset: it enrolled by client certificate, not a join token; ${why}: agentctl tls issue-node ${nodeId} --out DIR, then give its Agent --cert DIR/${nodeId}.pem --key DIR/${nodeId}.key\n`;
}

/** The rows of a node table, one per node, in the order given. */
export function nodeRows(nodes: readonly Node[], wide: boolean, now: Date): string[][] {
  return nodes.map((n) => {
    const row = [
      n.nodeId,
      nodeStatus(n),
      nodeVersion(n),
      n.platform || "-",
      n.pool || "-",
      n.activeCampaignId || "-",
      formatAge(n.lastSeen, now),
    ];
    if (wide) {
      row.push(
        n.heldBy || "-",
        formatLabels(n.labels),
        n.capabilities.length > 0 ? n.capabilities.join(",") : "-",
        n.previousVersion || "-",
        n.confirmedSequence.toString(),
        n.bootId || "-",
        formatTime(n.firstSeen),
      );
    }
    return row;
  });
}

/** Formats nodes as the `node list` table. */
export function formatNodeTable(nodes: readonly Node[], wide: boolean, now: Date): string {
  return formatTable(
    wide ? [...NODE_COLUMNS, ...WIDE_COLUMNS] : NODE_COLUMNS,
    nodeRows(nodes, wide, now),
  );
}

function nodeFields(node: Node, now: Date): string {
  return formatFields([
    ["Node", node.nodeId],
    ["Status", nodeStatus(node)],
    ["Control", node.heldBy || "-"],
    ["Version", node.agentVersion === "" ? "" : nodeVersion(node)],
    ["Previous version", node.previousVersion],
    ["Confirmed sequence", node.confirmedSequence.toString()],
    ["Platform", node.platform],
    ["Pool", node.pool],
    ["Labels", formatLabels(node.labels)],
    ["Capabilities", node.capabilities.join(", ")],
    ["Boot id", node.bootId],
    ["First seen", formatTime(node.firstSeen)],
    ["Last seen", `${formatTime(node.lastSeen)} (${formatAge(node.lastSeen, now)})`],
    ["Active campaign", node.activeCampaignId],
    ...(node.resetPending
      ? ([["Reset", "yes: its next join-token enrollment is accepted once"]] as const)
      : []),
    ...(node.trustFrozen
      ? ([
          [
            "Trust",
            `frozen since ${formatTime(node.trustFrozenSince)} (${formatAge(node.trustFrozenSince, now)}): new releases are refused; ${node.trustReason || "no reason given"}`,
          ],
        ] as const)
      : []),
  ]);
}

async function listAllPages(
  ctx: Context,
  request: ListNodesRequest,
  all: boolean,
): Promise<ListNodesResponse> {
  const first = await (await ctx.clients()).nodes.listNodes(request, { signal: ctx.signal });
  if (!all) return first;
  const seen = new Set<string>();
  let page = first;
  while (page.nextPageToken !== "" && !seen.has(page.nextPageToken)) {
    seen.add(page.nextPageToken);
    page = await (await ctx.clients()).nodes.listNodes(
      { ...request, pageToken: page.nextPageToken },
      { signal: ctx.signal },
    );
    first.nodes.push(...page.nodes);
  }
  first.nextPageToken = "";
  return first;
}

/** The `node` command group. */
export const nodeGroup: CommandGroup = {
  name: "node",
  summary: "List and inspect nodes, exclude them from campaigns",
  commands: {
    ...nodeIdentityCommands,
    list: {
      summary: "List nodes, ordered by id",
      flags: {
        label: {
          type: "string",
          multiple: true,
          value: "K=V",
          description: "only nodes with this label (repeatable; all must match)",
        },
        online: { type: "boolean", description: "only online nodes" },
        offline: { type: "boolean", description: "only offline nodes" },
        pool: { type: "string", value: "POOL", description: "only nodes of this pool" },
        "agent-version": {
          type: "string",
          value: "V",
          description: "only nodes running this agent version",
        },
        version: {
          type: "string",
          value: "V",
          description:
            "the same as --agent-version: e.g. the nodes still on a yanked release, to roll forward",
        },
        "page-size": {
          type: "string",
          value: "N",
          description: "nodes per page (1-1000, server default 100)",
        },
        "page-token": {
          type: "string",
          value: "TOKEN",
          description: "continue from a previous page",
        },
        all: { type: "boolean", description: "fetch every page" },
      },
      details:
        "With --json the output is a ListNodesResponse; with --all it holds every node and no next page token.",
      async run(ctx, { values, positionals }) {
        expectPositionals(positionals, []);
        if (boolFlag(values, "online") && boolFlag(values, "offline")) {
          throw new UsageError("--online and --offline cannot be used together");
        }
        const pageSize = stringFlag(values, "page-size");
        const request = create(ListNodesRequestSchema, {
          labels: parseKeyValues(listFlag(values, "label"), "label"),
          pool: stringFlag(values, "pool") ?? "",
          agentVersion: versionFilter(values),
          pageSize: pageSize === undefined ? 0 : parseInteger(pageSize, "page-size", 1, 1000),
          pageToken: stringFlag(values, "page-token") ?? "",
        });
        if (boolFlag(values, "online")) request.online = true;
        if (boolFlag(values, "offline")) request.online = false;
        const response = await listAllPages(ctx, request, boolFlag(values, "all"));
        if (ctx.output === "json") {
          ctx.stdout.write(messageJson(ListNodesResponseSchema, response));
          return 0;
        }
        if (response.nodes.length === 0) {
          ctx.stderr.write("No nodes match.\n");
          return 0;
        }
        ctx.stdout.write(formatNodeTable(response.nodes, ctx.output === "wide", ctx.now()));
        if (response.nextPageToken !== "") {
          ctx.stderr.write(
            `${response.nodes.length} of ${response.totalSize} nodes shown; more with --page-token ${response.nextPageToken} or --all\n`,
          );
        }
        return 0;
      },
    },
    show: {
      summary: "Show one node",
      args: "ID",
      flags: {},
      async run(ctx, { positionals }) {
        const [nodeId = ""] = expectPositionals(positionals, ["ID"]);
        const response = await (await ctx.clients()).nodes.getNode(
          { nodeId },
          { signal: ctx.signal },
        );
        if (ctx.output === "json") {
          ctx.stdout.write(messageJson(GetNodeResponseSchema, response));
        } else if (response.node !== undefined) {
          ctx.stdout.write(nodeFields(response.node, ctx.now()));
        }
        return 0;
      },
    },
    disable: {
      summary: "Exclude a node from future campaigns (its stream stays open)",
      args: "ID",
      flags: {
        reason: { type: "string", value: "TEXT", description: "why, for the audit log" },
        ...YES_FLAG,
      },
      details: CONFIRM_DETAILS,
      async run(ctx, { values, positionals }) {
        const [nodeId = ""] = expectPositionals(positionals, ["ID"]);
        const reason = stringFlag(values, "reason") ?? "";
        await confirmChange(ctx, values, {
          verb: "disable",
          refused: "not disabled",
          question: `Disable node ${nodeId} (no campaign offers it anything until it is enabled)?`,
        });
        const response = await (await ctx.clients()).nodes.disableNode(
          { nodeId, reason },
          { signal: ctx.signal },
        );
        ctx.stdout.write(
          ctx.output === "json"
            ? messageJson(DisableNodeResponseSchema, response)
            : `node ${nodeId} disabled\n`,
        );
        return 0;
      },
    },
    enable: {
      summary: "Make a disabled node eligible for campaigns again",
      args: "ID",
      flags: {},
      async run(ctx, { positionals }) {
        const [nodeId = ""] = expectPositionals(positionals, ["ID"]);
        const response = await (await ctx.clients()).nodes.enableNode(
          { nodeId },
          { signal: ctx.signal },
        );
        ctx.stdout.write(
          ctx.output === "json"
            ? messageJson(EnableNodeResponseSchema, response)
            : `node ${nodeId} enabled\n`,
        );
        return 0;
      },
    },
    reset: {
      summary: "Revoke a node's token so it can enroll again with a join token, once",
      args: "ID",
      flags: {
        reason: { type: "string", value: "TEXT", description: "why, for the audit log" },
        ...YES_FLAG,
      },
      details:
        `${CONFIRM_DETAILS}\n` +
        "For a node that lost its state. Its node token stops working at once (a stream it\n" +
        "has open stays until it ends); the next join-token enrollment of ID is accepted,\n" +
        "once. Without a reset, a join token enrolls only new node ids, unless it was created\n" +
        "with --node ID or --allow-reenroll (agentctl token create --help). A node that enrolled\n" +
        "by client certificate has no node token: one that lost its key, or was revoked (its\n" +
        "certificate stays refused), needs a new certificate (agentctl tls issue-node ID).",
      async run(ctx, { values, positionals }) {
        const [nodeId = ""] = expectPositionals(positionals, ["ID"]);
        const reason = stringFlag(values, "reason") ?? "";
        await confirmChange(ctx, values, {
          verb: "reset",
          refused: "not reset",
          question: `Reset node ${nodeId} (its node token stops working at once)?`,
        });
        const response = await (await ctx.clients()).nodes.resetNode(
          { nodeId, reason },
          { signal: ctx.signal },
        );
        ctx.stdout.write(
          ctx.output === "json"
            ? messageJson(ResetNodeResponseSchema, response)
            : resetText(response.node, nodeId),
        );
        return 0;
      },
    },
  },
};
