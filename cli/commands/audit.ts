/**
 * `agentctl audit list`: the audit log of administrative and campaign actions.
 */
import {
  type AuditEvent,
  ListAuditEventsResponseSchema,
} from "../../proto/gen/agentcontrol/admin/v1/audit_pb.js";
import { expectPositionals, parseInteger, stringFlag } from "../args.js";
import type { CommandGroup } from "../command.js";
import { formatTable, formatTime, messageJson } from "../output.js";

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
        e.actor || "-",
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
        "page-size": { type: "string", value: "N", description: "events per page" },
        "page-token": {
          type: "string",
          value: "TOKEN",
          description: "continue from a previous page",
        },
      },
      details:
        "--output wide adds the actor's address and the detail JSON. With --json a ListAuditEventsResponse.",
      async run(ctx, { values, positionals }) {
        expectPositionals(positionals, []);
        const pageSize = stringFlag(values, "page-size");
        const response = await (await ctx.clients()).audit.listAuditEvents(
          {
            campaignId: stringFlag(values, "campaign") ?? "",
            action: stringFlag(values, "action") ?? "",
            actor: stringFlag(values, "actor") ?? "",
            pageSize: pageSize === undefined ? 0 : parseInteger(pageSize, "page-size", 1, 1000),
            pageToken: stringFlag(values, "page-token") ?? "",
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
