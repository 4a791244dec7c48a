/**
 * The campaign engine's one decision: a pure, level-based function of the stored campaign, its
 * nodes, the live facts, the pending admin commands and the time.
 */
import { countedMs, inFlight, soakedMs } from "./batch-rules.js";
import { applyCommand } from "./commands.js";
import type { Draft } from "./draft.js";
import {
  activeNodes,
  batchNodes,
  changedNodes,
  createDraft,
  currentBatch,
  type FactsLookup,
  judgedDeadline,
  tallyOf,
} from "./draft.js";
import { gateGraceEnds } from "./gate-rules.js";
import type { GateResult } from "./gates.js";
import { judgeBreach, judgeFinish, judgePass } from "./judge-batch.js";
import { judgeRollback, judgeUpgrade, judgeVerifying } from "./judge-node.js";
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
import { awaitsRollback, judgeRollbackEnd } from "./rollback.js";
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
}

function judgeNodes(d: Draft): void {
  for (const n of activeNodes(d)) {
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
      default:
        break;
    }
  }
}

function step(d: Draft): void {
  judgeNodes(d);
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

function nextWake(d: Draft): number | undefined {
  const times: number[] = [];
  for (const n of activeNodes(d)) {
    if (inFlight(n, d.now) && n.state !== "verifying" && n.reconnectDeadline !== undefined)
      times.push(judgedDeadline(d, n.reconnectDeadline));
    if (n.state === "verifying" && n.graceEndsAt !== undefined) times.push(n.graceEndsAt);
    if (n.state === "rolling_back" && n.rollbackDeadline !== undefined)
      times.push(judgedDeadline(d, n.rollbackDeadline));
  }
  const c = d.campaign;
  const b = currentBatch(d);
  if (c.phase === "rolling_back" && tallyOf(d, b.index).failed > 0) {
    // Final nodes sent the rollback (only in a batch with failures) hold its end until judged.
    for (const n of batchNodes(d, b.index)) {
      if (awaitsRollback(n) && n.rollbackDeadline !== undefined)
        times.push(judgedDeadline(d, n.rollbackDeadline));
    }
  }
  const windows = c.spec.windows ?? [];
  if (c.phase === "running" && b.state === "running" && b.startedAt !== undefined) {
    if (windows.length === 0) {
      times.push(b.startedAt + b.pausedMs + b.minDurationMs);
      if (b.settledAt !== undefined) times.push(b.settledAt + c.spec.soakMs);
    } else {
      // Closed time does not count: wake at the next opening or closing, and while open when
      // the rest of the minimum duration or soak would be over if the window stays open.
      const change = nextWindowChange(windows, d.now);
      if (change !== undefined) times.push(change);
      if (windowOpen(windows, d.now)) {
        times.push(d.now + b.minDurationMs - countedMs(b, c.pausedAt, d.now, windows));
        if (b.settledAt !== undefined)
          times.push(d.now + c.spec.soakMs - soakedMs(b.settledAt, d.now, windows));
      }
    }
  }
  if ((c.phase === "running" || c.phase === "paused") && b.state === "running") {
    const grace = gateGraceEnds(c, b, d.gateResults, d.readyAt);
    if (grace !== undefined) times.push(grace);
  }
  // A loop, not Math.min(...times): one time per node in flight would overflow the stack.
  let wake: number | undefined;
  for (const t of times) if (t > d.now && (wake === undefined || t < wake)) wake = t;
  return wake;
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
  if (input.changedFacts !== undefined) {
    d.changedFacts = { batch: input.campaign.currentBatch, nodeIds: input.changedFacts };
  }
  for (const command of input.commands ?? []) applyCommand(d, command);
  const limit = 4 * (d.campaign.batches.length + 2);
  for (let round = 0; round < limit; round++) {
    const before = d.revision;
    step(d);
    if (d.revision === before) break;
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
