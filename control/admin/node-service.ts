/** `agentcontrol.admin.v1.NodeService`: the node registry and enrollment credentials. */

import { durationMs } from "@bufbuild/protobuf/wkt";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { type FilterQuery, raw } from "@mikro-orm/core";
import type { NodeService } from "../../proto/gen/agentcontrol/admin/v1/node_pb.js";
import type { AgentHub } from "../agents/hub.js";
import { isLabelKey } from "../agents/validate.js";
import { createSqlFleetStore } from "../campaign-store/index.js";
import type { Clock } from "../clock.js";
import { stageAudit } from "../db/audit-log.js";
import type { Database } from "../db/database.js";
import { NodeEntity, type NodeRecord } from "../db/entities/index.js";
import { issueJoinToken, listJoinTokens, revokeJoinToken } from "../db/join-token-store.js";
import { ControlError } from "../errors.js";
import { isNodeId } from "../shared/node-id.js";
import { type Principal, principalKey } from "./auth.js";
import { joinTokenMessage, nodeMessage } from "./convert.js";
import { disableNode, enableNode, type NodeCommand, resetNode } from "./node-commands.js";
import {
  assignedLabels,
  joinTokenMaxUses,
  labelText,
  nodeIdentityHandlers,
} from "./node-identity-service.js";
import { labelNodesHandler } from "./node-labels-bulk.js";
import {
  afterCursor,
  decodeNodeCursor,
  encodeNodeCursor,
  nodeIdContains,
  nodeOrderBy,
  parseNodeOrder,
} from "./node-list-order.js";
import { pageSize } from "./paging.js";

/** Dependencies of the node service. */
export interface NodeServiceDeps {
  readonly db: Database;
  readonly hub: AgentHub;
  readonly clock: Clock;
  /** The active campaign of each node, when campaigns exist. */
  readonly activeCampaignOf?: (nodeIds: readonly string[]) => Promise<Map<string, string>>;
  /** This Control's instance id: the holder shown for the nodes connected here. */
  readonly instanceId?: string;
}

const DEFAULT_JOIN_TTL_MS = 24 * 3600 * 1000;
const MAX_JOIN_TTL_MS = 365 * 24 * 3600 * 1000;
/** The most node ids one join token may be created for. */
export const MAX_JOIN_TOKEN_NODE_IDS = 1000;

/**
 * The scope of a join token to create: its named node ids (valid, deduplicated, in the
 * order given) and whether it may re-enroll any existing node.
 * @throws ControlError `invalid_argument` naming the bad id or the bad combination.
 */
export function joinTokenScope(req: { nodeIds: readonly string[]; allowReenroll: boolean }): {
  nodeIds: string[];
  allowReenroll: boolean;
} {
  const nodeIds = [...new Set(req.nodeIds)];
  if (nodeIds.length > MAX_JOIN_TOKEN_NODE_IDS) {
    throw new ControlError(
      "invalid_argument",
      `node_ids: at most ${MAX_JOIN_TOKEN_NODE_IDS} node ids per join token (got ${nodeIds.length})`,
      { field: "node_ids" },
    );
  }
  const bad = nodeIds.find((id) => !isNodeId(id));
  if (bad !== undefined) {
    throw new ControlError(
      "invalid_argument",
      `node_ids: "${bad.slice(0, 40)}" is not a valid node id (letters, digits, '.', '_', ':' or '-', at most 128)`,
      { field: "node_ids" },
    );
  }
  if (nodeIds.length > 0 && req.allowReenroll) {
    throw new ControlError(
      "invalid_argument",
      "allow_reenroll and node_ids cannot be combined: a token for named node ids already re-enrolls them",
      { field: "allow_reenroll" },
    );
  }
  return { nodeIds, allowReenroll: req.allowReenroll };
}

/** How a join token's scope reads in the audit log. */
function scopeText(scope: { nodeIds: readonly string[]; allowReenroll: boolean }): string {
  if (scope.nodeIds.length > 0) return `for node ids ${scope.nodeIds.join(", ")}`;
  return scope.allowReenroll ? "allowing re-enrollment of existing nodes" : "for new nodes only";
}

/**
 * Nodes that belong to campaign `campaignId` (any state), as a sub-select: a campaign of
 * 100,000 nodes is never a list of ids in the query.
 */
function inCampaign(campaignId: string): FilterQuery<NodeRecord> {
  const fragment = raw(
    (alias: string) =>
      `${alias}.id in (select cn.node_id from campaign_nodes cn where cn.campaign_id = ?)`,
    [campaignId],
  );
  return { [fragment]: [] } as FilterQuery<NodeRecord>;
}

/** The agent versions of `records` whose release is yanked (one query, none for no versions). */
async function yankedVersions(db: Database, records: readonly NodeRecord[]): Promise<Set<string>> {
  const versions = [...new Set(records.map((r) => r.agentVersion).filter((v) => v !== ""))];
  if (versions.length === 0) return new Set();
  const result = await db.pool.query<{ version: string }>(
    "select version from releases where version = any($1::text[]) and yanked_at is not null",
    [versions],
  );
  return new Set(result.rows.map((r) => r.version));
}

/** Builds the NodeService implementation. */
export function createNodeService(deps: NodeServiceDeps): ServiceImpl<typeof NodeService> {
  const present = async (records: NodeRecord[]) => {
    const campaigns = (await deps.activeCampaignOf?.(records.map((r) => r.id))) ?? new Map();
    const yanked = await yankedVersions(deps.db, records);
    return records.map((record) => {
      const lastSeenMs = deps.hub.lastSeenMs(record.id);
      const live =
        lastSeenMs === undefined
          ? undefined
          : { online: true, lastSeen: new Date(lastSeenMs), heldBy: deps.instanceId ?? "" };
      return nodeMessage(
        record,
        live,
        campaigns.get(record.id) ?? "",
        yanked.has(record.agentVersion),
      );
    });
  };
  const load = async (nodeId: string) => {
    const em = deps.db.em();
    const record = await em.findOne(NodeEntity, { id: nodeId });
    if (!record) throw new ControlError("node_not_found", `no node with id "${nodeId}"`);
    return { em, record };
  };

  const fleet = createSqlFleetStore(deps.db.pool);
  const command = (req: { nodeId: string; reason?: string }, ctx: HandlerContext): NodeCommand => {
    const principal = ctx.values.get(principalKey) as Principal;
    return {
      nodeId: req.nodeId,
      reason: req.reason ?? "",
      actor: { name: principal.name, ip: principal.ip },
      now: deps.clock.now(),
    };
  };
  const reload = async (nodeId: string) => {
    const { record } = await load(nodeId);
    return (await present([record]))[0];
  };

  return {
    ...labelNodesHandler({ db: deps.db, clock: deps.clock }),
    ...nodeIdentityHandlers(
      { db: deps.db, clock: deps.clock, cutOff: (id, message) => deps.hub.cutOff(id, message) },
      reload,
    ),
    async listNodes(req) {
      const limit = pageSize(req.pageSize);
      const order = parseNodeOrder(req.orderBy);
      const after = decodeNodeCursor(req.pageToken, order);
      const where: FilterQuery<NodeRecord> = {};
      const labels = Object.entries(req.labels);
      for (const [key] of labels) {
        if (!isLabelKey(key)) {
          throw new ControlError(
            "invalid_argument",
            `labels: "${key.slice(0, 40)}" is not a valid label key`,
            { field: "labels" },
          );
        }
      }
      // JSON containment (labels @> {...}): keys are data, never read as query operators.
      if (labels.length > 0) where.labels = { $contains: Object.fromEntries(labels) } as never;
      if (req.online !== undefined) where.online = req.online;
      if (req.pool) where.pool = req.pool;
      if (req.agentVersion) where.agentVersion = req.agentVersion;
      const idSearch = nodeIdContains(req.nodeIdContains);
      // A raw fragment is good for one query: each query gets its own.
      const filter = (): FilterQuery<NodeRecord> => ({
        $and: [
          where,
          ...(idSearch ? [idSearch] : []),
          ...(req.campaignId ? [inCampaign(req.campaignId)] : []),
        ],
      });
      const em = deps.db.em();
      const total = await em.count(NodeEntity, filter());
      const page = await em.find(
        NodeEntity,
        after === undefined ? filter() : { $and: [filter(), afterCursor(order, after)] },
        { orderBy: nodeOrderBy(order), limit: limit + 1 },
      );
      const more = page.length > limit;
      const rows = page.slice(0, limit);
      return {
        nodes: await present(rows),
        nextPageToken:
          more && rows.length > 0 ? encodeNodeCursor(rows[rows.length - 1]!, order) : "",
        totalSize: total,
      };
    },

    async getNode(req) {
      const { record } = await load(req.nodeId);
      const [node] = await present([record]);
      return { node };
    },

    async disableNode(req, ctx) {
      await disableNode(fleet, command(req, ctx));
      return { node: await reload(req.nodeId) };
    },

    async enableNode(req, ctx) {
      await enableNode(fleet, command(req, ctx));
      return { node: await reload(req.nodeId) };
    },

    async resetNode(req, ctx) {
      await resetNode(fleet, command(req, ctx));
      deps.hub.cutOff(req.nodeId, "node reset by an administrator: enroll again");
      return { node: await reload(req.nodeId) };
    },

    async createJoinToken(req, ctx) {
      const ttlMs = req.ttl ? durationMs(req.ttl) : DEFAULT_JOIN_TTL_MS;
      if (ttlMs <= 0 || ttlMs > MAX_JOIN_TTL_MS) {
        throw new ControlError("invalid_argument", "ttl must be more than 0 and at most 365 days", {
          field: "ttl",
        });
      }
      const scope = joinTokenScope(req);
      const maxUses = joinTokenMaxUses(req.maxUses);
      const labels = assignedLabels(req.labels, "labels");
      const principal = ctx.values.get(principalKey) as Principal;
      const em = deps.db.em();
      const now = deps.clock.now();
      const issued = await issueJoinToken(em, {
        ttlMs,
        description: req.description.slice(0, 256),
        createdBy: principal.name,
        now,
        scope,
        labels,
        ...(maxUses === undefined ? {} : { maxUses }),
      });
      stageAudit(em, {
        actor: principal,
        action: "token.create",
        time: now,
        message: `join token ${issued.record.id} created ${scopeText(scope)}${maxUses === undefined ? "" : `, at most ${maxUses} enrollments`}${Object.keys(labels).length > 0 ? `, labels ${labelText(labels)}` : ""}, expires ${issued.record.expiresAt.toISOString()}`,
        detail: { tokenId: issued.record.id, ...scope, maxUses: maxUses ?? null, labels },
      });
      await em.flush();
      return { token: joinTokenMessage(issued.record), secret: issued.credential };
    },

    async listJoinTokens() {
      const tokens = await listJoinTokens(deps.db.em());
      return { tokens: tokens.map(joinTokenMessage) };
    },

    async revokeJoinToken(req, ctx) {
      const principal = ctx.values.get(principalKey) as Principal;
      const em = deps.db.em();
      const now = deps.clock.now();
      const record = await revokeJoinToken(em, req.id, now);
      stageAudit(em, {
        actor: principal,
        action: "token.revoke",
        time: now,
        message: `join token ${record.id} revoked`,
        detail: { tokenId: record.id },
      });
      await em.flush();
      return { token: joinTokenMessage(record) };
    },
  };
}
