/**
 * `agentctl audit list`: the audit log of administrative and campaign actions.
 */

import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  type AuditEvent,
  ListAuditEventsResponseSchema,
} from "../../proto/gen/agentcontrol/admin/v1/audit_pb.js";
import { expectPositionals, parseInstant, parseInteger, stringFlag, UsageError } from "../args.js";
import type { CommandGroup } from "../command.js";
import { formatTable, formatTime, messageJson } from "../output.js";

/** The widest ACTOR cell of the table; a longer actor is cut with an ellipsis (full in --json). */
export const MAX_ACTOR_WIDTH = 32;

/** `text` cut to at most `width` characters, its end replaced by `…` when it was longer. */
export function truncate(text: string, width: number): string {
  const chars = [...text];
  return chars.length <= width ? text : `${chars.slice(0, width - 1).join("")}…`;
}

/** Formats audit events as the `audit list` table; `wide` adds the actor's address and detail. */
export function formatAuditTable(events: readonly AuditEvent[], wide: boolean): string {
  const header = ["ID", "TIME", "ACTOR", "ACTION", "CAMPAIGN", "NODE", "MESSAGE"];
  if (wide) header.push("IP", "DETAIL");
  return formatTable(
    header,
    events.map((e) => {
      const row = [
        e.id.toString(),
        formatTime(e.time),
        truncate(e.actor || "-", MAX_ACTOR_WIDTH),
        e.action,
        e.campaignId || "-",
        e.nodeId || "-",
        e.message || "-",
      ];
      if (wide) row.push(e.actorIp || "-", e.detailJson || "-");
      return row;
    }),
  );
}

/** The `audit` command group. */
export const auditGroup: CommandGroup = {
  name: "audit",
  summary: "Read the audit log",
  commands: {
    list: {
      summary: "List audit events, newest first",
      flags: {
        campaign: { type: "string", value: "ID", description: "only events of this campaign" },
        action: {
          type: "string",
          value: "ACTION",
          description: "only this action (start, pause, node.disable, …)",
        },
        actor: { type: "string", value: "ACTOR", description: "only events by this actor" },
        since: {
          type: "string",
          value: "TIME",
          description: "only events at or after TIME: RFC 3339, or a duration ago (2h, 30m)",
        },
        until: {
          type: "string",
          value: "TIME",
          description: "only events before TIME: RFC 3339, or a duration ago (2h, 30m)",
        },
        "page-size": { type: "string", value: "N", description: "events per page" },
        "page-token": {
          type: "string",
          value: "TOKEN",
          description: "continue from a previous page",
        },
      },
      details:
        "--since and --until take an RFC 3339 time (2026-12-07T09:00:00Z, 2026-12-07T10:00:00+01:00)\n" +
        "or a duration ago (2h, 1h30m). The ACTOR column is cut to 32 characters (…); --output\n" +
        "wide adds the actor's address and the detail JSON. With --json a ListAuditEventsResponse,\n" +
        "actors in full.",
      async run(ctx, { values, positionals }) {
        expectPositionals(positionals, []);
        const now = ctx.now();
        const sinceText = stringFlag(values, "since");
        const untilText = stringFlag(values, "until");
        const since = sinceText === undefined ? undefined : parseInstant(sinceText, "since", now);
        const until = untilText === undefined ? undefined : parseInstant(untilText, "until", now);
        if (since !== undefined && until !== undefined && until <= since) {
          throw new UsageError(
            `--until ${untilText} (${until.toISOString()}) is not after --since ${sinceText} (${since.toISOString()})`,
          );
        }
        const pageSize = stringFlag(values, "page-size");
        const response = await (await ctx.clients()).audit.listAuditEvents(
          {
            campaignId: stringFlag(values, "campaign") ?? "",
            action: stringFlag(values, "action") ?? "",
            actor: stringFlag(values, "actor") ?? "",
            pageSize: pageSize === undefined ? 0 : parseInteger(pageSize, "page-size", 1, 1000),
            pageToken: stringFlag(values, "page-token") ?? "",
            ...(since === undefined ? {} : { since: timestampFromDate(since) }),
            ...(until === undefined ? {} : { until: timestampFromDate(until) }),
          },
          { signal: ctx.signal },
        );
        if (ctx.output === "json") {
          ctx.stdout.write(messageJson(ListAuditEventsResponseSchema, response));
          return 0;
        }
        if (response.events.length === 0) {
          ctx.stderr.write("No audit events.\n");
          return 0;
        }
        ctx.stdout.write(formatAuditTable(response.events, ctx.output === "wide"));
        if (response.nextPageToken !== "")
          ctx.stderr.write(`more with --page-token ${response.nextPageToken}\n`);
        return 0;
      },
    },
  },
};
