/**
 * Administrator commands through the fleet store port (SQL in Control, memory in the
 * simulation): the API records a command (after checking it
 * applies to the campaign as it stands), the leader's worker applies it through `decide` in
 * the transaction that marks it applied and writes its audit row, and the API waits briefly
 * for that outcome. Any Control can take a command; only the leader applies it.
 */
import { setTimeout as delay } from "node:timers/promises";
import { type AdminCommand, commandError } from "../campaign/index.js";
import type { FleetStore, FleetTransaction, Queryable } from "../campaign-store/index.js";
import type { Actor } from "../db/audit-log.js";
import { ControlError } from "../errors.js";

/**
 * Records `command` for the campaign.
 * @throws campaign_not_found, or campaign_state when the command cannot apply now.
 * @returns the command row's id.
 */
export async function submitCommand(
  fleet: FleetStore,
  campaignId: string,
  command: AdminCommand,
  actor: Actor,
  now: Date,
): Promise<string> {
  return await fleet.transaction((tx) => recordCommand(tx, campaignId, command, actor, now));
}

/**
 * {@link submitCommand} inside the caller's fleet transaction `tx`, so the command commits with
 * the caller's other writes.
 * @throws campaign_not_found, or campaign_state when the command cannot apply now.
 * @returns the command row's id.
 */
export async function recordCommand(
  tx: FleetTransaction,
  campaignId: string,
  command: AdminCommand,
  actor: Actor,
  now: Date,
): Promise<string> {
  const row = await tx.campaigns.readCampaign(campaignId);
  if (!row) throw new ControlError("campaign_not_found", `no campaign with id "${campaignId}"`);
  const why = commandError(row.campaign, command);
  if (why !== undefined) throw new ControlError("campaign_state", why);
  return await tx.insertCommand(
    {
      campaignId,
      kind: command.kind,
      rollback: command.kind === "abort" ? command.rollback : false,
      ...(command.kind === "skip_gate" ? { gate: command.gate } : {}),
      reason: command.reason ?? "",
      actor: actor.name,
      actorIp: actor.ip,
    },
    now,
  );
}

/**
 * Waits up to `timeoutMs` (wall time: a request's patience, not engine time) for the command
 * to be applied.
 * @returns its outcome ("applied" or "ignored: why"), or undefined when no leader applied it
 *   in time (it stays recorded and is applied when a leader runs).
 */
export async function awaitCommand(
  q: Queryable,
  id: string,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<string | undefined> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const result = await q.query<{ outcome: string | null }>(
      "select outcome from campaign_commands where id = $1 and applied_at is not null",
      [id],
    );
    const outcome = result.rows[0]?.outcome;
    if (outcome) return outcome;
    if (performance.now() >= deadline || signal?.aborted) return undefined;
    await delay(25, undefined, { signal }).catch(() => {});
  }
}
