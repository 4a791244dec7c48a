/** `agentcontrol.admin.v1.AuditService`: the audit log, newest first, filtered and paged. */
import { create } from "@bufbuild/protobuf";
import { type Timestamp, timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  AuditEventSchema,
  type AuditService,
} from "../../proto/gen/agentcontrol/admin/v1/audit_pb.js";
import type { Database } from "../db/database.js";
import { ControlError } from "../errors.js";
import { decodePageToken, encodePageToken, pageSize } from "./paging.js";

/** Dependencies of the audit service. */
export interface AuditServiceDeps {
  readonly db: Database;
}

interface AuditRow {
  id: string;
  time: Date;
  actor: string;
  actor_ip: string;
  action: string;
  campaign_id: string | null;
  node_id: string | null;
  message: string;
  detail: unknown;
}

/**
 * A time filter's instant, or undefined when unset.
 * @throws ControlError `invalid_argument` naming `field` when it is no representable time.
 */
function timeFilter(value: Timestamp | undefined, field: string): Date | undefined {
  if (value === undefined) return undefined;
  const date = timestampDate(value);
  if (Number.isNaN(date.getTime())) {
    throw new ControlError("invalid_argument", `${field} is not a valid time`, { field });
  }
  return date;
}

/**
 * Builds the AuditService implementation. Filters are exact matches and a time range
 * (`since` inclusive, `until` exclusive), AND-ed.
 */
export function createAuditService(deps: AuditServiceDeps): ServiceImpl<typeof AuditService> {
  return {
    async listAuditEvents(req) {
      const limit = pageSize(req.pageSize);
      const after = decodePageToken(req.pageToken);
      if (after !== undefined && !/^\d+$/.test(after)) {
        throw new ControlError("invalid_argument", "page_token is not one this server issued", {
          field: "page_token",
        });
      }
      const params: unknown[] = [];
      const where: string[] = [];
      const filter = (column: string, value: string) => {
        if (!value) return;
        params.push(value);
        where.push(`${column} = $${params.length}`);
      };
      filter("campaign_id", req.campaignId);
      filter("action", req.action);
      filter("actor", req.actor);
      const since = timeFilter(req.since, "since");
      const until = timeFilter(req.until, "until");
      if (since !== undefined && until !== undefined && until <= since) {
        throw new ControlError(
          "invalid_argument",
          `until (${until.toISOString()}) must be after since (${since.toISOString()})`,
          { field: "until" },
        );
      }
      if (since !== undefined) {
        params.push(since);
        where.push(`time >= $${params.length}`);
      }
      if (until !== undefined) {
        params.push(until);
        where.push(`time < $${params.length}`);
      }
      if (after !== undefined) {
        params.push(after);
        where.push(`id < $${params.length}::bigint`);
      }
      params.push(limit + 1);
      const result = await deps.db.pool.query<AuditRow>(
        `select id::text as id, time, actor, actor_ip, action, campaign_id, node_id, message, detail
           from audit_events ${where.length > 0 ? `where ${where.join(" and ")}` : ""}
          order by audit_events.id desc limit $${params.length}`,
        params,
      );
      const rows = result.rows.slice(0, limit);
      const last = rows.at(-1);
      return {
        events: rows.map((r) =>
          create(AuditEventSchema, {
            id: BigInt(r.id),
            time: timestampFromDate(r.time),
            actor: r.actor,
            actorIp: r.actor_ip,
            action: r.action,
            campaignId: r.campaign_id ?? "",
            nodeId: r.node_id ?? "",
            message: r.message,
            detailJson: JSON.stringify(r.detail ?? {}),
          }),
        ),
        nextPageToken: result.rows.length > limit && last ? encodePageToken(last.id) : "",
      };
    },
  };
}
