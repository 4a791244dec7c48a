/** `agentcontrol.admin.v1.NodeService`: the node registry and enrollment credentials. */

import { durationMs } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import type { FilterQuery } from "@mikro-orm/core";
import type { NodeService } from "../../proto/gen/agentcontrol/admin/v1/node_pb.js";
import type { AgentHub } from "../agents/hub.js";
import { isLabelKey } from "../agents/validate.js";
import type { Clock } from "../clock.js";
import { stageAudit } from "../db/audit-log.js";
import type { Database } from "../db/database.js";
import { NodeEntity, type NodeRecord } from "../db/entities/index.js";
import { issueJoinToken, listJoinTokens, revokeJoinToken } from "../db/join-token-store.js";
import { ControlError } from "../errors.js";
import { type Principal, principalKey } from "./auth.js";
import { joinTokenMessage, nodeMessage } from "./convert.js";
import { decodePageToken, encodePageToken, pageSize } from "./paging.js";

/** Dependencies of the node service. */
export interface NodeServiceDeps {
  readonly db: Database;
  readonly hub: AgentHub;
  readonly clock: Clock;
  /** The active campaign of each node, when campaigns exist. */
  readonly activeCampaignOf?: (nodeIds: readonly string[]) => Promise<Map<string, string>>;
}

const DEFAULT_JOIN_TTL_MS = 24 * 3600 * 1000;
const MAX_JOIN_TTL_MS = 365 * 24 * 3600 * 1000;

/** Builds the NodeService implementation. */
export function createNodeService(deps: NodeServiceDeps): ServiceImpl<typeof NodeService> {
  const present = async (records: NodeRecord[]) => {
    const campaigns = (await deps.activeCampaignOf?.(records.map((r) => r.id))) ?? new Map();
    return records.map((record) => {
      const lastSeenMs = deps.hub.lastSeenMs(record.id);
      const live =
        lastSeenMs === undefined ? undefined : { online: true, lastSeen: new Date(lastSeenMs) };
      return nodeMessage(record, live, campaigns.get(record.id) ?? "");
    });
  };
  const load = async (nodeId: string) => {
    const em = deps.db.em();
    const record = await em.findOne(NodeEntity, { id: nodeId });
    if (!record) throw new ControlError("node_not_found", `no node with id "${nodeId}"`);
    return { em, record };
  };

  return {
    async listNodes(req) {
      const limit = pageSize(req.pageSize);
      const after = decodePageToken(req.pageToken);
      const where: FilterQuery<NodeRecord> = {};
      const labels = Object.entries(req.labels);
      for (const [key] of labels) {
        if (!isLabelKey(key)) {
          throw new ControlError(
            "invalid_argument",
            `labels: "${key.slice(0, 40)}" is not a valid label key`,
          );
        }
      }
      // JSON containment (labels @> {...}): keys are data, never read as query operators.
      if (labels.length > 0) where.labels = { $contains: Object.fromEntries(labels) } as never;
      if (req.online !== undefined) where.online = req.online;
      if (req.pool) where.pool = req.pool;
      if (req.agentVersion) where.agentVersion = req.agentVersion;
      const em = deps.db.em();
      const total = await em.count(NodeEntity, where);
      const page = await em.find(
        NodeEntity,
        after === undefined ? where : { $and: [where, { id: { $gt: after } }] },
        { orderBy: { id: "asc" }, limit: limit + 1 },
      );
      const more = page.length > limit;
      const rows = page.slice(0, limit);
      return {
        nodes: await present(rows),
        nextPageToken: more && rows.length > 0 ? encodePageToken(rows[rows.length - 1]!.id) : "",
        totalSize: total,
      };
    },

    async getNode(req) {
      const { record } = await load(req.nodeId);
      const [node] = await present([record]);
      return { node };
    },

    async disableNode(req, ctx) {
      const { em, record } = await load(req.nodeId);
      const principal = ctx.values.get(principalKey) as Principal;
      if (record.enabled) {
        record.enabled = false;
        record.disabledReason = req.reason;
        record.updatedAt = deps.clock.now();
        stageAudit(em, {
          actor: principal,
          action: "node.disable",
          time: deps.clock.now(),
          nodeId: record.id,
          message: `node ${record.id} disabled${req.reason ? `: ${req.reason}` : ""}`,
        });
        await em.flush();
      }
      const [node] = await present([record]);
      return { node };
    },

    async enableNode(req, ctx) {
      const { em, record } = await load(req.nodeId);
      const principal = ctx.values.get(principalKey) as Principal;
      if (!record.enabled) {
        record.enabled = true;
        record.disabledReason = "";
        record.updatedAt = deps.clock.now();
        stageAudit(em, {
          actor: principal,
          action: "node.enable",
          time: deps.clock.now(),
          nodeId: record.id,
          message: `node ${record.id} enabled`,
        });
        await em.flush();
      }
      const [node] = await present([record]);
      return { node };
    },

    async createJoinToken(req, ctx) {
      const ttlMs = req.ttl ? durationMs(req.ttl) : DEFAULT_JOIN_TTL_MS;
      if (ttlMs <= 0 || ttlMs > MAX_JOIN_TTL_MS) {
        throw new ControlError("invalid_argument", "ttl must be more than 0 and at most 365 days");
      }
      const principal = ctx.values.get(principalKey) as Principal;
      const em = deps.db.em();
      const now = deps.clock.now();
      const issued = await issueJoinToken(em, {
        ttlMs,
        description: req.description.slice(0, 256),
        createdBy: principal.name,
        now,
      });
      stageAudit(em, {
        actor: principal,
        action: "token.create",
        time: now,
        message: `join token ${issued.record.id} created, expires ${issued.record.expiresAt.toISOString()}`,
        detail: { tokenId: issued.record.id },
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
