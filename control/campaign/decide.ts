/**
 * The campaign engine's one decision: a pure, level-based function of the stored campaign, its
 * nodes, the live facts, the pending admin commands and the time.
 */
import { assertNever } from "./assert-never.js";
import { countedMs, soakedMs } from "./batch-rules.js";
import { applyCommand } from "./commands.js";
import { deferralEnds } from "./deferral.js";
import type { Draft } from "./draft.js";
import {
  activeNodes,
  batchNodes,
  changedNodes,
  createDraft,
  currentBatch,
  type FactsLookup,
  judgedDeadline,
  waitingNodes,
} from "./draft.js";
import { gateGraceEnds } from "./gate-rules.js";
import type { GateResult } from "./gates.js";
import { judgeAway, lostDeadline } from "./judge-away.js";
import { judgeBreach, judgeFinish, judgePass } from "./judge-batch.js";
import {
  judgeRollback,
  judgeUpgrade,
  judgeVerifying,
  REVERT_REPORT_GRACE_MS,
} from "./judge-node.js";
import { judgingContext, nodesToJudge } from "./judge-since.js";
import type { JudgedMark } from "./judged-mark.js";
import type {
  Action,
  AdminCommand,
  CampaignEvent,
  CampaignNode,
  CampaignState,
  PoolLoad,
  Target,
} from "./model.js";
import { offerNext, settleWithoutOffer } from "./offer.js";
import { judgeRollbackEnd } from "./rollback.js";
import { rollbackDeadlineOf } from "./rollback-verdict.js";
import { nextWindowChange, windowOpen } from "./windows.js";

/** Everything a decision reads. */
export interface DecideInput {
  readonly campaign: CampaignState;
  /** Every node of the campaign. */
  readonly nodes: readonly CampaignNode[];
  /**
   * Live facts by node id; a node without facts counts as offline with nothing known. Asked
   * only for the nodes a rule reads (active ones, and the current batch's waiting ones).
   */
  readonly facts: FactsLookup;
  readonly now: number;
  readonly target: Target;
  /** Admin commands to apply first, in order (see `commandError`). */
  readonly commands?: readonly AdminCommand[] | undefined;
  /**
   * The nodes whose facts may have changed since the previous decision of this campaign, when
   * the caller knows them; undefined means any may have. A waiting node of the batch that was
   * already current then is settled without an offer only if it is among these (the others
   * were looked at with the same facts before). A batch started during this decision is always
   * looked at whole.
   */
  readonly changedFacts?: ReadonlySet<string> | undefined;
  /**
   * The previous decision's `judged` mark, with every node whose facts may have changed since
   * that decision read them (reports, send and config failures, boot id, version, capabilities,
   * registry row), when the caller kept both and gives this decision the records that decision
   * wrote. A change of liveness alone (online, offline, last heartbeat) need not be counted: a
   * verdict reads it only at the node's deadline, which is judged anyway. Then only the active nodes whose record or facts changed, or whose deadline passed
   * since the mark, are judged (`judge-since.ts`): the decision is the same as without it, only
   * cheaper. Undefined: every active node is judged.
   */
  readonly judgedSince?:
    | { readonly mark: JudgedMark; readonly changedFacts: ReadonlySet<string> }
    | undefined;
  /**
   * When the deciding Control became ready (took the lead), epoch ms: reconnect and rollback
   * deadlines are never judged within a reconnect timeout of it (no node could be reached while
   * no Control decided); a batch passes only on gate results taken since, and an unreachable
   * gate's grace counts from it at the earliest (`gate-rules.ts`). Undefined: deadlines and gate
   * results are judged as they stand.
   */
  readonly readyAt?: number | undefined;
  /** Position of each node id in `nodes`, when the caller keeps one (saves building it). */
  readonly positions?: ReadonlyMap<string, number> | undefined;
  /**
   * The fleet-wide load of the pools this campaign's nodes are in, by pool ("" = no pool): the
   * disruption budget is counted over every campaign (SPEC §8 I5). For a pool with an entry, the
   * limit is `poolLimit(size, disruptionBudgetPercent)` and the in-flight count starts at
   * `inFlightElsewhere`, so nothing is offered there while other campaigns hold the budget. A
   * pool without an entry (or no map) is counted as this campaign alone: its own nodes in that
   * pool as the size, nothing in flight elsewhere. Give an entry for every pool of the
   * campaign's nodes.
   */
  readonly pools?: ReadonlyMap<string, PoolLoad> | undefined;
  /**
   * The latest result of each of the campaign's gates for its current batch, as the worker
   * evaluated and stored them (`gates.ts`); absent or empty: none yet. A batch of a campaign
   * with gates passes only on results that hold, and breaches on one that fails.
   */
  readonly gates?: readonly GateResult[] | undefined;
  /**
   * Set when the target release was yanked (`agentctl release yank`): the campaign offers
   * nothing more and its running batch takes on_breach (code release_yanked) with this reason;
   * no batch passes. Absent: not yanked.
   */
  readonly yanked?: { readonly reason: string } | undefined;
  /**
   * The yanked releases among the campaign's nodes' previous versions, by version (the worker
   * reads them with the target's yank). A breach never rolls a node back onto one of them: its
   * rollback is withheld and the node stays on the target, named (code or rollbackResult
   * rollback_withheld, `rollback.ts`). Absent or empty: none yanked.
   */
  readonly yankedPrevious?: ReadonlyMap<string, { readonly reason: string }> | undefined;
}

/** What changed: the new campaign record if it changed, and the new records of changed nodes. */
export interface DecisionChanges {
  readonly campaign: CampaignState | undefined;
  readonly nodes: readonly CampaignNode[];
}

/** A decision's outcome: persist `changes` and `actions` in one transaction, then send. */
export interface Decision {
  readonly changes: DecisionChanges;
  /** Operations to send, each at most once per node, kind and campaign (ids are deterministic). */
  readonly actions: readonly Action[];
  /** Campaign-level happenings, for the audit log and watchers. */
  readonly events: readonly CampaignEvent[];
  /** The next time-based deadline after `now`, if any: run again then (or on the next event). */
  readonly wakeAt: number | undefined;
  /** One line per change, for the log. */
  readonly reasons: readonly string[];
  /**
   * Whether it looked at the waiting nodes of the batch current after it (it does not while
   * that batch is paused, breached or not running): only then are the facts it was given
   * (`changedFacts`) taken into account.
   */
  readonly lookedAtWaiting: boolean;
  /**
   * What this decision vouches for, to hand back as the next one's `judgedSince.mark` once its
   * changes are written; undefined when its rounds did not reach a fixpoint (the next one then
   * judges every active node).
   */
  readonly judged: JudgedMark | undefined;
}

function judgeNodes(d: Draft): void {
  for (const n of nodesToJudge(d)) {
    switch (n.state) {
      case "offered":
      case "applying":
      case "restarting":
        judgeUpgrade(d, n);
        break;
      case "verifying":
        judgeVerifying(d, n);
        break;
      case "rolling_back":
        judgeRollback(d, n);
        break;
      // Waiting nodes are looked at by the offering; final ones are judged no more.
      case "waiting":
      case "succeeded":
      case "failed":
      case "timed_out":
      case "skipped":
      case "canceled":
      case "rolled_back":
      case "rollback_failed":
        break;
      default:
        assertNever(n.state, "node state");
    }
  }
}

function step(d: Draft): void {
  judgeNodes(d);
  judgeAway(d);
  judgeBreach(d);
  judgeRollbackEnd(d);
  const c = d.campaign;
  if ((c.phase === "running" || c.phase === "paused") && currentBatch(d).state === "running") {
    settleWithoutOffer(d);
  }
  judgeBreach(d);
  if (d.campaign.phase === "running" && currentBatch(d).state === "running") offerNext(d);
  // Skipping offline nodes shrinks the offerable count: judge the breach again before passing.
  judgeBreach(d);
  judgePass(d);
  judgeFinish(d);
}

/**
 * When to decide again though no fact changed: the earliest time after `now` at which a rule
 * reads a deadline that `now` has not reached. A wake only asks for another decision, so an
 * extra one is harmless and a missing or late one would leave a deadline unjudged; undefined
 * when no rule waits on time. The times: each upgrading node's reconnect deadline, each
 * verifying node's config grace end and lost deadline (`judge-away.ts`); while the campaign
 * rolls back, the deadline of each rollback its batch was sent; while it runs, the next window
 * edge and, inside a window, when the rest of the batch's minimum duration and soak would be
 * over; while it runs or is paused on a running batch, an unreachable gate's grace end. Node
 * deadlines are taken as they are judged ({@link judgedDeadline}). One pass over the active
 * nodes (and the batch's nodes while rolling back), never a spread: any fleet size.
 */
function nextWake(d: Draft): number | undefined {
  let wake = Number.POSITIVE_INFINITY;
  /** Keeps `t` if it is after now and before every time kept so far; no time keeps nothing. */
  const take = (t: number | undefined): void => {
    if (t !== undefined && t > d.now) wake = Math.min(wake, t);
  };
  /** Keeps a node's reconnect or rollback deadline at the time it is judged. */
  const takeDeadline = (deadline: number | undefined): void => {
    if (deadline !== undefined) take(judgedDeadline(d, deadline));
  };
  for (const n of activeNodes(d)) {
    // A rolling-back node waits for its rollback (below); offered, applying or restarting:
    if (n.state === "verifying") {
      take(n.graceEndsAt);
      takeDeadline(lostDeadline(d, n));
    } else if (n.state !== "rolling_back") {
      takeDeadline(n.reconnectDeadline);
      if (n.revertSeenAt !== undefined) take(n.revertSeenAt + REVERT_REPORT_GRACE_MS);
    }
  }
  const c = d.campaign;
  const b = currentBatch(d);
  if (c.phase === "rolling_back") {
    // Its batch's rollbacks (to the nodes that were upgrading, and to the final nodes that may
    // run the target) hold the end until each is judged; only they have a rollback deadline.
    for (const n of batchNodes(d, b.index)) takeDeadline(rollbackDeadlineOf(d, n));
  }
  if (c.phase === "running") {
    // Closed time does not count: wake at the next opening or closing, and while open when the
    // rest of the minimum duration or soak would be over if the window stays open. Without
    // windows it is always open and nothing is closed: the plain ends of minimum and soak.
    const { windows } = c.spec;
    take(nextWindowChange(windows, d.now));
    if (windowOpen(windows, d.now)) {
      take(d.now + b.minDurationMs - countedMs(b, c.pausedAt, d.now, windows));
      if (b.settledAt !== undefined)
        take(d.now + c.spec.soakMs - soakedMs(b.settledAt, d.now, windows));
    }
  }
  if ((c.phase === "running" || c.phase === "paused") && b.state === "running") {
    take(gateGraceEnds(c, b, d.gateResults, d.readyAt));
  }
  if (c.phase === "running" && b.state === "running") {
    // A deferred node is offered again at its retry time and skipped when its deferral ends.
    for (const n of waitingNodes(d, b.index)) {
      if (n.deferredAt === undefined) continue;
      take(n.deferRetryAt);
      take(deferralEnds(c.spec, n));
    }
  }
  return wake === Number.POSITIVE_INFINITY ? undefined : wake;
}

/**
 * Decides what the campaign does now. Pure: no I/O, no clock, no randomness. Level-based: it
 * reads only stored state, facts and `now`, and runs its rules to a fixpoint, so applying its
 * changes and deciding again with the same input yields no change and no action. Final node
 * states never change. Actions appear only on the transition that needs them (offer, rollback,
 * batch pass); resending an unacknowledged operation is the delivery layer's job (outbox).
 */
export function decide(input: DecideInput): Decision {
  const d = createDraft(
    input.campaign,
    input.nodes,
    input.facts,
    input.now,
    input.target,
    input.positions,
    input.pools,
  );
  if (input.readyAt !== undefined) d.readyAt = input.readyAt;
  if (input.gates !== undefined) d.gateResults = input.gates;
  if (input.yanked !== undefined) d.yanked = input.yanked;
  if (input.yankedPrevious !== undefined) d.yankedPrevious = input.yankedPrevious;
  if (input.changedFacts !== undefined) {
    d.changedFacts = { batch: input.campaign.currentBatch, nodeIds: input.changedFacts };
  }
  if (input.judgedSince !== undefined) {
    d.judgedUnder = input.judgedSince.mark;
    d.factsSince = input.judgedSince.changedFacts;
  }
  for (const command of input.commands ?? []) applyCommand(d, command);
  const limit = 4 * (d.campaign.batches.length + 2);
  let settled = false;
  for (let round = 0; round < limit && !settled; round++) {
    const before = d.revision;
    step(d);
    settled = d.revision === before;
  }
  return {
    changes: {
      campaign: d.campaignChanged ? d.campaign : undefined,
      nodes: changedNodes(d),
    },
    actions: d.actions,
    events: d.events,
    wakeAt: nextWake(d),
    reasons: d.reasons,
    lookedAtWaiting: d.settledBatches.has(d.campaign.currentBatch),
    judged: settled ? { at: d.now, context: judgingContext(d) } : undefined,
  };
}

/** The records after a decision: what the worker's transaction writes, for callers and tests. */
export function applyDecision(
  campaign: CampaignState,
  nodes: readonly CampaignNode[],
  decision: Decision,
): { campaign: CampaignState; nodes: CampaignNode[] } {
  const changed = new Map(decision.changes.nodes.map((n) => [n.nodeId, n]));
  return {
    campaign: decision.changes.campaign ?? campaign,
    nodes: nodes.map((n) => changed.get(n.nodeId) ?? n),
  };
}
