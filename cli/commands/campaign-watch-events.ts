/**
 * `campaign watch --events`: a line per node that changed state. WatchCampaign streams the
 * campaign's counts, not its nodes, so the follower lists the campaign's nodes that left
 * `waiting` (ListCampaignNodes, page by page) after updates, at most one listing at a time and
 * one more when updates arrived during it, and reports each node whose state differs from the
 * listing before (the first listing: each node that left `waiting`).
 */
import {
  type Campaign,
  type CampaignNode,
  CampaignNodeSchema,
  NodeState,
  NodeStateSchema,
} from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import type { Context } from "../command.js";
import { tableJson } from "../table-json.js";
import { stateName } from "./campaign-format.js";

/** One node's change between two listings. */
export interface NodeEvent {
  readonly node: CampaignNode;
  /** The state it had in the listing before (`waiting` when it was not listed). */
  readonly from: NodeState;
}

/**
 * The nodes of `nodes` whose state differs from `known` (a node not known was waiting), in
 * the listing's order; `known` is updated to the listing.
 */
export function diffNodes(
  known: Map<string, NodeState>,
  nodes: readonly CampaignNode[],
): NodeEvent[] {
  const events: NodeEvent[] = [];
  for (const node of nodes) {
    const from = known.get(node.nodeId) ?? NodeState.WAITING;
    if (from !== node.state) events.push({ node, from });
    known.set(node.nodeId, node.state);
  }
  return events;
}

/**
 * One event as a line: `2026-12-07T05:00:00.000Z  node web-7  batch 2  applying → failed
 * apply_failed: exit 3`. The batch counts from 1 by its position in `campaign`, as the tables.
 */
export function formatNodeEvent(event: NodeEvent, campaign: Campaign, now: Date): string {
  const { node, from } = event;
  const at = campaign.batches.findIndex((b) => b.index === node.batch);
  const why = [node.code, node.message].filter((s) => s !== "").join(": ");
  const parts = [
    now.toISOString(),
    `node ${node.nodeId}`,
    `batch ${at < 0 ? node.batch + 1 : at + 1}`,
    `${stateName(from)} → ${stateName(node.state)}`,
  ];
  if (node.rollbackResult !== "") parts.push(`rollback ${node.rollbackResult}`);
  if (why !== "") parts.push(why);
  return parts.join("  ");
}

/** One event as a JSON line: `{"node": CampaignNode, "from": "applying"}`, in table words. */
export function nodeEventJson(event: NodeEvent): string {
  return `${JSON.stringify({ node: tableJson(CampaignNodeSchema, event.node), from: stateName(event.from) })}\n`;
}

/** Every node state but `waiting`: the nodes an event can be about. */
const MOVED_STATES = NodeStateSchema.values
  .map((v) => v.number as NodeState)
  .filter((s) => s !== NodeState.UNSPECIFIED && s !== NodeState.WAITING);

const PAGE = 1000;

/** Follows a campaign's nodes; see the module comment. */
export interface NodeFollower {
  /** Asks for a listing (now, or after the one in progress). */
  poke(): void;
  /** Resolves once no listing is in progress or asked for. */
  settled(): Promise<void>;
}

/**
 * A follower of campaign `id` that hands each listing's events to `report`. A listing that
 * fails is dropped (the next update asks again); `ctx.signal` stops it.
 */
export function createNodeFollower(
  ctx: Context,
  id: string,
  report: (events: NodeEvent[]) => void,
): NodeFollower {
  const known = new Map<string, NodeState>();
  let wanted = false;
  let running: Promise<void> | undefined;
  const listOnce = async (): Promise<void> => {
    const client = (await ctx.clients()).campaigns;
    const nodes: CampaignNode[] = [];
    let pageToken = "";
    for (;;) {
      const page = await client.listCampaignNodes(
        { campaignId: id, states: MOVED_STATES, pageSize: PAGE, pageToken },
        { signal: ctx.signal },
      );
      nodes.push(...page.nodes);
      if (page.nextPageToken === "") break;
      pageToken = page.nextPageToken;
    }
    const events = diffNodes(known, nodes);
    if (events.length > 0) report(events);
  };
  const loop = async (): Promise<void> => {
    while (wanted && !ctx.signal.aborted) {
      wanted = false;
      try {
        await listOnce();
      } catch {
        // Dropped: the watch itself reports a lost connection; the next update lists again.
      }
    }
    running = undefined;
  };
  return {
    poke() {
      wanted = true;
      running ??= loop();
    },
    async settled() {
      while (running !== undefined) await running;
    },
  };
}
