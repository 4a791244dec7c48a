/**
 * Administrator commands (pause, resume, abort) as inputs of a decision. The API handler checks
 * a command with {@link commandError} (to answer FAILED_PRECONDITION), then runs `decide` with
 * it in the same transaction; decide ignores a command that no longer applies, so re-running a
 * decision with an already-applied command changes nothing.
 */
import { assertNever } from "./assert-never.js";
import { countBatch } from "./batch-rules.js";
import type { Draft } from "./draft.js";
import { batchNodes, currentBatch, updateBatch, updateCampaign } from "./draft.js";
import { cancelWaiting, closePause, startRollback } from "./judge-batch.js";
import type { AdminCommand, CampaignState } from "./model.js";

/** Why the command cannot apply to the campaign now, or undefined when it can. */
export function commandError(campaign: CampaignState, command: AdminCommand): string | undefined {
  const { phase } = campaign;
  switch (command.kind) {
    case "pause":
      return phase === "running"
        ? undefined
        : `campaign ${campaign.id} is ${phase}; only a running campaign can be paused`;
    case "resume":
      return phase === "paused"
        ? undefined
        : `campaign ${campaign.id} is ${phase}; only a paused campaign can be resumed`;
    case "abort":
      return phase === "running" || phase === "paused"
        ? undefined
        : `campaign ${campaign.id} is ${phase}; only a running or paused campaign can be aborted`;
    default:
      return assertNever(command, "command");
  }
}

/**
 * Applies one command. Pause: phase paused from now (no offers, no new batch; nodes still
 * judged). Resume: the pause's time goes to the batch's paused time; a batch breached under
 * on_breach=pause runs again with its current failures and gate results accepted (a further
 * failure, or a gate failing after the resume, breaches it again). Abort: waiting nodes canceled; without rollback phase aborted at once; with rollback
 * the current batch is rolled back first (as on a breach, cause "abort").
 */
export function applyCommand(d: Draft, command: AdminCommand): void {
  const why = commandError(d.campaign, command);
  if (why !== undefined) {
    d.events.push({ kind: "command_ignored", command, why });
    d.reasons.push(`ignored ${command.kind}: ${why}`);
    return;
  }
  d.events.push({ kind: "command_applied", command });
  const reason = command.reason ?? "";
  switch (command.kind) {
    case "pause":
      updateCampaign(
        d,
        { phase: "paused", pausedAt: d.now, message: reason || "paused by an operator" },
        "paused by an operator",
      );
      return;
    case "resume": {
      closePause(d);
      const b = currentBatch(d);
      if (b.state === "breached") {
        const { failed } = countBatch(batchNodes(d, b.index));
        // Gate results taken until now are accepted too: only a later failing one breaches.
        updateBatch(d, b.index, {
          state: "running",
          acceptedFailures: failed,
          gatesAcceptedAt: d.now,
        });
      }
      updateCampaign(
        d,
        { phase: "running", code: undefined, message: undefined, stoppedByNodeId: undefined },
        "resumed by an operator",
      );
      return;
    }
    case "abort": {
      const message = reason || "aborted by an operator";
      updateCampaign(d, { code: "aborted", message });
      if (command.rollback) {
        startRollback(d, "abort", message);
        return;
      }
      closePause(d);
      cancelWaiting(d, "aborted", `canceled: ${message}`);
      const b = currentBatch(d);
      updateBatch(d, b.index, {
        state: b.state === "running" ? "canceled" : b.state,
        endedAt: d.now,
      });
      updateCampaign(d, { phase: "aborted" }, message);
      return;
    }
    default:
      assertNever(command, "command");
  }
}
