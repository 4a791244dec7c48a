/**
 * Which unacknowledged operation of the outbox is still worth (re-)sending: the one rule both
 * store adapters apply (`CampaignStore.unackedOperations`). The memory adapter calls
 * {@link worthResending}; the SQL adapter writes the same conditions from the same lists
 * ({@link OFFER_DELIVERY_PHASES}, `RESEND_UPGRADE_NODE_STATES`) and judges an upgrade's rows
 * with {@link upgradeHeldBack} (windows, a disabled node), so the two can never disagree on a
 * phase or a state. The engine judges an unacknowledged offer's deadline by the same
 * {@link upgradeHeldBack} (`judge-node.ts`): an offer Control holds back fails no node.
 *
 * A row may be unacknowledged because it never reached its Agent (its stream was on another
 * Control, or dropped as it was sent) or because the Agent holds it and has not reported yet.
 * The store cannot tell the two apart, so a re-send is judged as a first delivery:
 * - an upgrade goes only while the engine would offer it now ({@link upgradeHeldBack}): its
 *   node is offered (or applying/restarting) and enabled, its campaign runs (not paused,
 *   aborted, rolling back or ended), one of its maintenance windows is open, and its target is
 *   not yanked. An Agent that already
 *   holds the offer loses nothing: it reports on it when it reconnects, and the re-send, under
 *   the same id, resumes once the campaign offers again;
 * - a confirm goes until acknowledged, unless its release was yanked since (confirming would
 *   raise the Agent's confirmed floor to a release the operator declared unfit);
 * - a rollback goes until the Agent reports on it, whatever its node's state, unless the
 *   release it rolls back onto was yanked since (a rollback never reinstalls a yanked
 *   release) or its node belongs to a campaign created later (an old rollback never undoes a
 *   newer upgrade). Once its campaign finished it is a late rollback (`late-rollback.ts`): it
 *   goes only while its node's latest Hello is on the campaign's target, and the store then
 *   admits it only under its pool's disruption budget (`admitLateRollbacks`).
 */
import { assertNever } from "./assert-never.js";
import { CAMPAIGN_PHASES, type CampaignPhase } from "./model.js";
import { NODE_STATE_TRAITS, type NodeState } from "./node-state-traits.js";
import { type MaintenanceWindow, windowOpen } from "./windows.js";

/**
 * True for the campaign phases in which an offer may be delivered, first or again: only a
 * running campaign offers (a paused one offers nothing new; an aborted, rolling-back or ended
 * one never offers again).
 */
export function deliversOffers(phase: CampaignPhase): boolean {
  switch (phase) {
    case "running":
      return true;
    case "paused":
    case "rolling_back":
    case "completed":
    case "rolled_back":
    case "aborted":
    case "failed":
      return false;
    default:
      return assertNever(phase, "campaign phase");
  }
}

/** The phases of {@link deliversOffers}, in lifecycle order (the SQL adapter's list). */
export const OFFER_DELIVERY_PHASES: readonly CampaignPhase[] =
  CAMPAIGN_PHASES.filter(deliversOffers);

/** What {@link upgradeHeldBack} judges of an upgrade offer. */
export interface OfferDelivery {
  /** Its campaign's phase. */
  readonly phase: CampaignPhase;
  /** Its campaign's maintenance windows. */
  readonly windows: readonly MaintenanceWindow[] | undefined;
  /** Its campaign's target is yanked. */
  readonly targetYanked: boolean;
  /** Its node's registry row says an administrator disabled it (unknown: enabled). */
  readonly nodeDisabled: boolean;
}

/**
 * Why an upgrade offer is held back from its Agent at `now` (epoch ms), as a phrase ("the
 * campaign is paused", "outside the campaign's windows", "the node is disabled", "the target
 * is yanked"); undefined when it may be delivered, first or again. A disabled node is never
 * offered, so an offer recorded before the disable and not yet delivered is held back too.
 */
export function upgradeHeldBack(o: OfferDelivery, now: number): string | undefined {
  if (o.targetYanked) return "the target is yanked";
  if (!deliversOffers(o.phase)) return `the campaign is ${o.phase.replace("_", " ")}`;
  if (o.nodeDisabled) return "the node is disabled";
  if (!windowOpen(o.windows, now)) return "outside the campaign's windows";
  return undefined;
}

/** What {@link worthResending} judges of one unacknowledged outbox row. */
export interface UnackedOperation {
  /** The operation's kind (`upgrade`, `rollback`, `confirm`; any other is never re-sent). */
  readonly kind: string;
  /** The state of its node in its campaign. */
  readonly nodeState: NodeState;
  /** Its campaign's phase. */
  readonly phase: CampaignPhase;
  /** Its campaign's maintenance windows. */
  readonly windows: readonly MaintenanceWindow[] | undefined;
  /**
   * The release it puts the node on is yanked: the campaign's target for an upgrade or a
   * confirm, the node's previous release for a rollback (unknown: not yanked).
   */
  readonly releaseYanked: boolean;
  /** Its node belongs to a campaign created after this one. */
  readonly nodeInLaterCampaign: boolean;
  /** Its node's registry row says an administrator disabled it (unknown: enabled). */
  readonly nodeDisabled: boolean;
  /** Its campaign has finished (a rollback is then a late one). */
  readonly campaignFinished: boolean;
  /** Its node's latest Hello is on its campaign's target (`lateRollbackWanted`). */
  readonly nodeOnTarget: boolean;
}

/** True when the unacknowledged row `op` is to be sent at `now` (epoch ms); see the file's TSDoc. */
export function worthResending(op: UnackedOperation, now: number): boolean {
  if (op.releaseYanked) return false;
  switch (op.kind) {
    case "upgrade":
      return (
        NODE_STATE_TRAITS[op.nodeState].resendUpgrade &&
        upgradeHeldBack({ ...op, targetYanked: false }, now) === undefined
      );
    case "confirm":
      return true;
    case "rollback":
      return !op.nodeInLaterCampaign && (!op.campaignFinished || op.nodeOnTarget);
    default:
      return false;
  }
}
