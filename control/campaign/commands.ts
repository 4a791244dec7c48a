/**
 * Administrator commands (pause, resume, abort, skip a gate) as inputs of a decision. The API handler checks
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
    case "skip_gate":
      return skipGateError(campaign, command.gate);
    default:
      return assertNever(command, "command");
  }
}

/**
 * Why gate `gate` (an index) cannot be skipped now: the campaign must be running or paused with
 * its current batch running, or breached under on_breach=pause (the skip then holds once the
 * operator resumes), and the gate must exist and not be skipped for that batch already.
 */
function skipGateError(campaign: CampaignState, gate: number): string | undefined {
  const { id, phase } = campaign;
  if (phase !== "running" && phase !== "paused")
    return `campaign ${id} is ${phase}; a gate can be skipped only in a running or paused campaign`;
  const gates = campaign.spec.gates ?? [];
  if (!Number.isInteger(gate) || gate < 0 || gate >= gates.length)
    return gates.length === 0
      ? `campaign ${id} has no gates`
      : `campaign ${id} has gates 1 to ${gates.length}; there is no gate ${gate + 1}`;
  const b = campaign.batches[campaign.currentBatch];
  if (b === undefined || (b.state !== "running" && b.state !== "breached"))
    return `batch ${campaign.currentBatch + 1} of campaign ${id} is ${b?.state ?? "missing"}; a gate can be skipped only for a running batch`;
  if (b.skippedGates?.includes(gate))
    return `gate ${gate + 1} is already skipped for batch ${b.index + 1} of campaign ${id}`;
  return undefined;
}

/**
 * Applies one command. Pause: phase paused from now (no offers, no new batch; nodes still
 * judged). Resume: the pause's time goes to the batch's paused time; a batch breached under
 * on_breach=pause runs again with its current failures and gate results accepted (a further
 * failure, or a gate failing after the resume, breaches it again). Abort: waiting nodes canceled; without rollback phase aborted at once; with rollback
 * the current batch is rolled back first (as on a breach, cause "abort"). Skip gate: the gate
 * counts as holding for the current batch only (`skippedGates`); nothing else changes, so a
 * batch paused by that gate's breach still waits for a resume.
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
      // The operator stopped it: no node is its stopper, whatever breach paused it before.
      updateCampaign(d, { code: "aborted", message, stoppedByNodeId: undefined });
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
    case "skip_gate": {
      const b = currentBatch(d);
      const skippedGates = [...(b.skippedGates ?? []), command.gate].sort((x, y) => x - y);
      updateBatch(d, b.index, { skippedGates });
      d.reasons.push(`gate ${command.gate + 1} skipped for batch ${b.index + 1} by an operator`);
      return;
    }
    default:
      assertNever(command, "command");
  }
}
