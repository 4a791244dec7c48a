/**
 * # Campaign engine — pure core
 *
 * Functional core of Agent Control's campaigns (SPEC §4). No I/O, no clock, no randomness, no
 * logging: the worker (imperative shell) loads state, calls {@link decide}, and persists the
 * result plus its operations in ONE transaction (outbox), then sends.
 *
 * ## Lifecycle
 * Start: `resolveSpec` → {@link admit} (the one admission of every start: `validateSpec`, the
 * release's version, expiry and platforms, a ramp's step limit, `planCampaign` — candidates →
 * canary order → cumulative batches, ceil — confirmed sequences, busy nodes, nothing to
 * upgrade) → `createCampaign` (phase running, batch 0 started at now, nodes waiting, those of
 * a platform the release lacks skipped) → persist → `decide`.
 *
 * Node states: `waiting → offered → applying → restarting → verifying → succeeded`, or
 * `failed | timed_out | skipped | canceled`, and on rollback `rolling_back → rolled_back |
 * rollback_failed`. Final states (succeeded, failed, timed_out, skipped, canceled, rolled_back,
 * rollback_failed) never change; `updateNode` throws if asked to.
 * - `verifying` = back on the target with a new boot id. It lasts until the batch PASSES (or, in
 *   an aborted/stopped campaign, until its config grace ends): a node is only `succeeded` once
 *   its batch passed and it was confirmed. This is what makes "watched for the rest of its batch"
 *   and "roll back the batch's upgraded nodes" possible without ever changing a final state.
 *   A verifying node holds a concurrency/budget slot only during its config grace (0 without
 *   config.v1); after it, it is "settled" but still watched. A rolling_back node holds one
 *   until it is back (it restarts onto its previous release), and so does a final node sent its
 *   batch's rollback until that rollback's outcome is recorded.
 * - What each state means to every rule (final, upgrading, failure, holds a slot, busy, upgrade
 *   re-sent) is one row of `NODE_STATE_TRAITS` (`node-state-traits.ts`); the engine's predicates
 *   and the stores' lists and SQL are derived from it.
 * - Threshold failures are `failed` + `timed_out`; denominator: batch nodes not `skipped`.
 *
 * Phases: `running | paused | rolling_back` (live) → `completed | rolled_back | aborted |
 * failed` (ended; never change again). A phase changes at the moment of the decision;
 * `finishedAt` is set once the phase has ended AND every node is final.
 *
 * ## One decision
 * Input ({@link DecideInput}): campaign record (with batch records), all its node records,
 * `facts` per node, `now`, `target {version, sequence}`, optional admin `commands`.
 * The worker supplies per node ({@link NodeFacts}): `online` (stream open and heartbeating),
 * `offline` (no stream for `offlineAfter`, counted from this Control's ready time or the node's
 * last sighting, whichever is later; neither online nor offline = reconnecting: not offered, never
 * skipped as offline), `bootId` / `agentVersion` / `capabilities` of its latest Hello (kept while
 * offline), the latest `ObservedState` per operation id of THIS campaign,
 * `ConfigStatus{ok:false}` with time and the session's boot id, and send failures (operations it
 * gave up delivering). No facts = offline.
 *
 * Order within a decision, repeated to a fixpoint (so a re-run on the result is a no-op): apply
 * commands → judge every non-final node → breach → rollback end → settle nodes needing no offer
 * → breach → offer → breach (skipping nodes that went away shrinks the denominator) → pass
 * batch / start next / complete → finish. `judgePass` itself refuses a breached batch.
 * Also given: `pools` (each pool's fleet size and nodes in flight in other campaigns) and
 * `readyAt` (when the deciding Control took the lead: no reconnect or rollback deadline is
 * judged within one reconnect timeout of it).
 *
 * ## Safety invariants
 * The invariants are judged outside the engine, so that no check shares the code it checks:
 * over stored records by the reference models of `simulation/reference/`
 * (`simulation/record-invariants.ts`), and over what the simulated agents really ran, received
 * and confirmed (`simulation/outcome-invariants.ts`). The property tests run the record checks
 * at every decision and the deterministic simulation runs all of them after every step.
 *
 * Output ({@link Decision}): `changes` (full new campaign record if changed; full new records
 * of changed nodes only), `actions` (upgrade/rollback/confirm with deterministic ids
 * `campaignId/nodeId/kind`), `events` (phase changes, batch started/passed, breach, rollback,
 * command applied/ignored, finished — for audit and Watch), `wakeAt` (next deadline), `reasons`.
 *
 * ## What the worker persists, when
 * In one transaction per decision: the campaign row (phase, currentBatch, batches with
 * startedAt/pausedMs/settledAt/endedAt/state/acceptedFailures, pausedAt, code, message,
 * stoppedByNodeId, rollbackCause, finishedAt), the changed node rows (all fields: operation
 * ids, offeredAt/offerBootId/reconnectDeadline, backAt/backBootId/graceEndsAt, rollback
 * fields, timestamps), the actions as outbox rows keyed by operation id (insert-or-ignore),
 * audit rows for events. Use a `version` column on the campaign row to fence two writers.
 * After commit, send outbox rows; re-send unacknowledged ones on reconnect (at-least-once;
 * the agent dedupes by id). decide never re-emits an action: delivery is the outbox's job.
 * Operations sent after a node is final (a rollback to a `timed_out` or `failed`
 * config_apply_failed / reconnect_timeout node of a rolled-back batch; a confirm to an
 * `already_current` node of a passed batch) are recorded on it with `annotateFinal`, its state
 * kept; the rollback's end waits for such a rollback's outcome too (`awaitsRollback`).
 * Run decide every worker tick (5 s), on every agent event of a campaign node, and at `wakeAt`.
 * Admin commands: check `commandError` (→ `campaign_state`), then run decide with the command
 * in the same transaction as the audit row; a stale command is ignored (event says why).
 *
 * ## Decisions where the spec is silent
 * - Empty batch (rounding made two cumulative counts equal): kept, passes at once.
 * - Pool = node's pool ("" = one shared pool); pool size = the pool's enabled nodes in the
 *   fleet ({@link PoolLoad}, else the campaign's nodes in it); in flight per pool ≤ max(1,
 *   floor(size × budget / 100)), counted over every campaign (`inFlightElsewhere` + this one's):
 *   the "at least 1" is the pool's, not each campaign's.
 * - Selector fields AND-ed; exclude tags: any matching label pair excludes.
 * - Reconnect deadline passed: `timed_out` if offline and it never announced RESTARTING
 *   (stopped heartbeating while running), else `failed/reconnect_timeout` (restarted and not
 *   back on the target, or still online but unfinished). Both count as failures.
 * - Offer needs online + known boot id. Success needs a boot id ≠ the one at offer.
 * - Waiting nodes are skipped `node_offline` only when nothing of the batch is in flight, none
 *   waiting is reachable and every one waiting is offline (a reconnecting one holds the batch).
 * - A disabled node (`NodeFacts.disabled`) is never offered: when its batch looks at its waiting
 *   nodes or the offering reaches it, it is skipped `node_disabled` (not in the denominator);
 *   one already in flight finishes.
 * - ObservedState VERIFYING (package check) counts as applying; REINSTATED on the upgrade
 *   operation = failed/reverted.
 * - Config failures count if from a boot after the offer; after the grace only while the
 *   batch is watched (running or paused-on-breach).
 * - on_breach=pause → phase paused, batch `breached`; resume accepts the current failures
 *   (`acceptedFailures`) and any further failure breaches again.
 * - Abort with rollback ends `aborted` (code `aborted`, the message and the finish event saying
 *   which batch rolled back), or failed/rollback_* when a rollback failed; only a breach ends
 *   `rolled_back`.
 * - Confirm goes to nodes this campaign upgraded, at their batch's pass; already-current nodes
 *   are not confirmed; aborted/stopped campaigns confirm nothing more.
 * - Breach stopper: the failure, in time then canary order, that first exceeded the threshold.
 * - Pause/resume/abort allowed in running|paused only (resume: paused only); abort during
 *   rolling_back is refused.
 * - Maintenance windows (`windows.ts`): outside every window nothing is offered and no node is
 *   skipped offline; closed time does not count toward a batch's minimum duration or soak;
 *   `wakeAt` includes the next opening or closing.
 * - A ramp (`ramp.ts`) is planned as batches, one per step; the first capped by the canary share.
 * - Gate results (`DecideInput.gates`, `gates.ts`, `gate-rules.ts`): a settled batch passes only
 *   on a holding result of every gate taken after it settled and since this Control took the
 *   lead (`readyAt`); a failing one, or one unreachable for the gate grace (counted from the
 *   latest of the streak's start, the accepting resume and `readyAt`), breaches it.
 * - A batch does not pass while one of its verifying nodes is reconnecting (no stream, not
 *   offline yet): it passes on what its nodes run now, not on what they ran before an outage.
 * - Campaign-level breaches (`campaign-limits.ts`), judged after a batch's threshold: the target
 *   yanked (`DecideInput.yanked`, code release_yanked), failures over `maxFailures` across every
 *   batch (max_failures_exceeded), a settled batch short of `minCanaries` nodes settled after an
 *   offer (min_canaries_unmet). Each takes on_breach; a resume accepts the failures and sample
 *   it has, as for a batch.
 */
export * from "./admit.js";
export { NAMED_IN_MESSAGE, refusalMessage } from "./admit-refusal.js";
export * from "./assert-never.js";
export * from "./batch-rules.js";
export { commandError } from "./commands.js";
export { CONTROL_CLOCK_DISAGREEMENT_MS } from "./control-clocks.js";
export * from "./convergence-plan.js";
export * from "./create.js";
export * from "./decide.js";
export * from "./deferral.js";
export * from "./desired.js";
export * from "./desired-record.js";
export * from "./download-budget.js";
export { type FactsLookup, isActive } from "./draft.js";
export * from "./engine-features.js";
export * from "./estimate.js";
export * from "./failure-budget.js";
export * from "./fleet-summary.js";
export * from "./gate-hosts.js";
export { gatesWanted } from "./gate-rules.js";
export * from "./gates.js";
export type { JudgedMark } from "./judged-mark.js";
export * from "./late-rollback.js";
export * from "./model.js";
export * from "./node-state-traits.js";
export * from "./operation-id.js";
export * from "./plan.js";
export * from "./progress.js";
export * from "./ramp.js";
export * from "./resend-rules.js";
export * from "./retry.js";
export { awaitsRollback } from "./rollback.js";
export * from "./rollout-plan.js";
export * from "./spec.js";
export * from "./waits.js";
export * from "./waits-format.js";
export * from "./windows.js";
export * from "./yanked-previous.js";
