/**
 * What a decision writes to the audit log: every administrator command with its actor, and
 * every campaign-level event of the engine (actor "control"), except that the phase change a
 * command caused directly (pause → paused, resume → running, abort → aborted/rolling_back) and
 * an abort's rollback are attributed to the command's actor.
 */
import type { AdminCommand, CampaignEvent } from "../campaign/index.js";
import type { AuditRow, CommandRow } from "../campaign-store/index.js";

/** The engine's actor name. */
export const ENGINE_ACTOR = "control";

function caused(command: AdminCommand, event: CampaignEvent): boolean {
  if (event.kind === "rollback_started") return command.kind === "abort" && event.cause === "abort";
  if (event.kind !== "phase_changed") return false;
  switch (command.kind) {
    case "pause":
      return event.to === "paused";
    case "resume":
      return event.to === "running";
    case "abort":
      return event.to === "aborted" || event.to === "rolling_back";
    default:
      return false;
  }
}

function describe(event: CampaignEvent, campaignId: string): Omit<AuditRow, "actor" | "actorIp"> {
  const base = { campaignId };
  switch (event.kind) {
    case "phase_changed":
      return {
        ...base,
        action: "phase",
        message: `campaign ${campaignId}: ${event.from} → ${event.to}`,
        detail: { from: event.from, to: event.to },
      };
    case "batch_started":
      return {
        ...base,
        action: "batch.start",
        message: `campaign ${campaignId}: batch ${event.batch + 1} started`,
        detail: { batch: event.batch },
      };
    case "batch_passed":
      return {
        ...base,
        action: "batch.pass",
        message: `campaign ${campaignId}: batch ${event.batch + 1} passed${event.carriedOver === undefined ? "" : `; ${event.carriedOver} node(s) still deferring carried over to a later batch`}`,
        detail: {
          batch: event.batch,
          ...(event.carriedOver === undefined ? {} : { carriedOver: event.carriedOver }),
        },
      };
    case "breached":
      return {
        ...base,
        action: "breach",
        nodeId: event.stoppedByNodeId,
        message:
          event.gate === undefined
            ? `campaign ${campaignId}: batch ${event.batch + 1} breached its threshold (${event.failed} of ${event.offerable} failed)`
            : `campaign ${campaignId}: batch ${event.batch + 1} breached: gate ${event.gate + 1} failed`,
        detail: {
          batch: event.batch,
          failed: event.failed,
          offerable: event.offerable,
          ...(event.gate === undefined ? {} : { gate: event.gate }),
        },
      };
    case "gate":
      return {
        ...base,
        action: "gate",
        message: `campaign ${campaignId}: batch ${event.batch + 1}: ${event.label} ${event.status === "pass" ? "holds" : event.status === "fail" ? "fails" : "is unreachable"}: ${event.message} (value ${event.value})`,
        detail: {
          batch: event.batch,
          gate: event.gate,
          status: event.status,
          value: event.value,
          message: event.message,
        },
      };
    case "rollback_started":
      return {
        ...base,
        action: "rollback",
        message: `campaign ${campaignId}: rolling back batch ${event.batch + 1} (${event.cause})`,
        detail: { batch: event.batch, cause: event.cause },
      };
    case "command_applied":
    case "command_ignored": {
      const c = event.command;
      const ignored = event.kind === "command_ignored" ? event.why : undefined;
      const what =
        c.kind === "abort" && c.rollback
          ? "abort with rollback"
          : c.kind === "skip_gate"
            ? `skip gate ${c.gate + 1}`
            : c.kind;
      return {
        ...base,
        action: c.kind,
        message: ignored
          ? `campaign ${campaignId}: ${what} ignored: ${ignored}`
          : `campaign ${campaignId}: ${what}${c.reason ? `: ${c.reason}` : ""}`,
        detail: {
          ...(c.kind === "abort" ? { rollback: c.rollback } : {}),
          ...(c.kind === "skip_gate" ? { gate: c.gate } : {}),
          reason: c.reason ?? "",
          ...(ignored ? { ignored } : {}),
        },
      };
    }
    case "finished":
      return {
        ...base,
        action: "finish",
        message: `campaign ${campaignId} finished: ${event.phase}${event.rolledBackBatch === undefined ? "" : `, batch ${event.rolledBackBatch + 1} rolled back`}`,
        detail: {
          phase: event.phase,
          ...(event.rolledBackBatch === undefined
            ? {}
            : { rolledBackBatch: event.rolledBackBatch }),
        },
      };
    default:
      return { ...base, action: "event", message: `campaign ${campaignId}: event` };
  }
}

/**
 * The audit rows of one decision's events. `commands` are the stored commands the decision
 * was given, in order: the i-th command event belongs to the i-th command.
 */
export function auditRowsOf(
  campaignId: string,
  events: readonly CampaignEvent[],
  commands: readonly CommandRow[],
): AuditRow[] {
  const rows: AuditRow[] = [];
  let index = 0;
  let current: { row: CommandRow; command: AdminCommand; attributed: Set<string> } | undefined;
  for (const event of events) {
    let actor = ENGINE_ACTOR;
    let actorIp = "";
    if (event.kind === "command_applied" || event.kind === "command_ignored") {
      const row = commands[index++];
      current = row ? { row, command: event.command, attributed: new Set() } : undefined;
      if (row) {
        actor = row.actor;
        actorIp = row.actor_ip;
      }
    } else if (current && !current.attributed.has(event.kind) && caused(current.command, event)) {
      current.attributed.add(event.kind);
      actor = current.row.actor;
      actorIp = current.row.actor_ip;
    }
    rows.push({ actor, actorIp, ...describe(event, campaignId) });
  }
  return rows;
}

/** The outcome stored on each command row, from the decision's command events. */
export function commandOutcomes(
  events: readonly CampaignEvent[],
  commands: readonly CommandRow[],
): { id: string; outcome: string }[] {
  const outcomes = events.flatMap((e) =>
    e.kind === "command_applied"
      ? ["applied"]
      : e.kind === "command_ignored"
        ? [`ignored: ${e.why}`]
        : [],
  );
  return commands.map((c, i) => ({ id: c.id, outcome: outcomes[i] ?? "ignored: unknown command" }));
}
