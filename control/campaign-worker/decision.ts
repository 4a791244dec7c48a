/**
 * One decision for one campaign, as a unit of work: in ONE transaction, fence the lease,
 * lock the campaign row, bring the campaign's working copy (nodes, registry rows, persisted
 * facts) up to date, read the pending commands and the load of its pools, run the pure
 * `decide`, and write its changes, outbox rows, applied commands and audit rows. Only after
 * the commit does the working copy take the new records; the caller sends the returned
 * operations after it too.
 *
 * A node an administrator disabled is never offered: the registry rows of the nodes a
 * decision would offer are read again in its transaction, and a node found disabled there
 * makes the decision run again with that fact, until no node it offers is disabled.
 */
import {
  type AdminCommand,
  applyDecision,
  type CampaignNode,
  type CampaignState,
  type DecideInput,
  type Decision,
  decide,
  type FactsLookup,
  type JudgedMark,
  type NodeFacts,
  type Stall,
  unknownFeatures,
} from "../campaign/index.js";
import {
  type CampaignStore,
  type CampaignTransaction,
  type CommandRow,
  commandOf,
  type LeaderLease,
  type NewOperation,
  type NodeRegistryRow,
  type OfferRelease,
  type Outgoing,
} from "../campaign-store/index.js";
import type { Clock } from "../clock.js";
import { auditRowsOf, commandOutcomes } from "./audit.js";
import { decisionDifference } from "./decision-difference.js";
import { buildFacts, type Liveness, platformOf, type WorkerGateway } from "./facts.js";
import { buildOperation } from "./operations.js";
import { judgeStall, noteStall, type ReportedStalls } from "./stall.js";
import type { WorkingCopies, WorkingCopy } from "./working-copy.js";

/** What one decision needs. */
export interface DecisionDeps {
  readonly store: Pick<CampaignStore, "transaction">;
  readonly lease: LeaderLease;
  readonly gateway: WorkerGateway;
  readonly clock: Clock;
  /** The target release with its envelope (cached by the caller). */
  readonly release: (version: string) => Promise<OfferRelease | undefined>;
  readonly publicUrl: () => string;
  /** The worker's working copies of its campaigns. */
  readonly copies: WorkingCopies;
  /** What makes a node without a stream offline (the decision's `now` is added). */
  readonly liveness: Omit<Liveness, "now">;
  /** This Control's instance id (a registry row it holds is no stream elsewhere). */
  readonly self: string;
  /** The stalls already reported (`stall.ts`); absent: stalls are neither judged nor reported. */
  readonly stalls?: ReportedStalls | undefined;
  /**
   * When set, every decision judged incrementally (`DecideInput.judgedSince`) is decided in
   * full too, and a difference between the two is told here (the simulation checks that there
   * is none); the incremental decision is the one written. Absent: decided once.
   */
  readonly compareFullJudging?: ((campaignId: string, difference: string) => void) | undefined;
  /**
   * The engine features this Control knows (default: this release's); a campaign recording
   * another is not decided (`DecisionOutcome.steppedAside`).
   */
  readonly engineFeatures?: readonly string[] | undefined;
}

/** The outcome of {@link runDecision}. */
export interface DecisionOutcome {
  /** False when the campaign does not exist or had already finished. */
  readonly live: boolean;
  readonly decision: Decision | undefined;
  /** Every node of the campaign after the decision (read lazily, once). */
  readonly nodeIds: Iterable<string>;
  /** Operations committed to the outbox, to send now. */
  readonly outgoing: readonly Outgoing[];
  /** Operations that could not be built: decide again to judge them. */
  readonly undeliverable: number;
  readonly finished: boolean;
  /** The campaign after the decision (undefined when it does not exist or had finished). */
  readonly campaign: CampaignState | undefined;
  /** Milliseconds spent reading, deciding and writing (the transaction's commit included). */
  readonly timings: { readonly read: number; readonly decide: number; readonly write: number };
  /** The campaign's stall after the decision, when stalls are judged and it is stalled. */
  readonly stall?: Stall | undefined;
  /**
   * The engine features the live campaign records that this Control does not know: it was not
   * decided, nothing was written, and a Control that knows them must lead it.
   */
  readonly steppedAside?: readonly string[] | undefined;
}

const NOTHING: DecisionOutcome = {
  live: false,
  decision: undefined,
  nodeIds: [],
  outgoing: [],
  undeliverable: 0,
  finished: true,
  campaign: undefined,
  timings: { read: 0, decide: 0, write: 0 },
};

/**
 * Runs one fenced decision for `campaignId` and commits it.
 * @throws StaleLeaderError when this process no longer leads (nothing is written),
 *   CampaignVersionConflict when another writer changed the campaign meanwhile.
 */
export async function runDecision(
  deps: DecisionDeps,
  campaignId: string,
): Promise<DecisionOutcome> {
  const began = performance.now();
  let committed:
    | {
        version: number;
        nodes: readonly CampaignNode[];
        stale: string[];
        seen: ReadonlySet<string> | undefined;
        lookedAtWaiting: boolean;
        judged: { mark: JudgedMark | undefined; facts: ReadonlySet<string> };
      }
    | undefined;
  let read = 0;
  let decided = 0;
  let stall: Stall | undefined;
  const outcome = await deps.store.transaction(async (tx) => {
    await deps.lease.fence(tx);
    const row = await tx.readCampaign(campaignId, true);
    if (!row || row.finishedAt !== undefined) {
      deps.copies.forget(campaignId);
      return NOTHING;
    }
    // A campaign using engine features this release lacks is not ours to judge: deciding it
    // would misjudge those features and write records that lose them.
    const unknown = unknownFeatures(row.features ?? [], deps.engineFeatures);
    if (unknown.length > 0) {
      deps.copies.forget(campaignId);
      return { ...NOTHING, live: true, finished: false, steppedAside: unknown };
    }
    // Cached by the worker after the first decision of a release: no query per decision.
    const release = await deps.release(row.targetVersion);
    const copy = await deps.copies.current(tx, campaignId, row.version, deps.clock.now().getTime());
    const stored = await tx.pendingCommands(campaignId);
    const known: { row: CommandRow; command: AdminCommand }[] = [];
    for (const r of stored) {
      const command = commandOf(r);
      if (command) known.push({ row: r, command });
    }
    read = performance.now();
    const now = deps.clock.now();
    // Read in the transaction, never cached: a yank stops the very next decision's offers, and
    // a breach never rolls a node back onto a yanked previous release (one query for both).
    const yanks = await tx.readYanks(yankVersions(row.targetVersion, copy.nodes));
    const input: DecideInput = {
      campaign: row.campaign,
      nodes: copy.nodes,
      facts: factsOf(deps, copy, now.getTime()),
      now: now.getTime(),
      target: {
        version: row.targetVersion,
        sequence: row.campaign.targetSequence,
        platforms: release?.artifacts.map((a) => a.platform),
      },
      commands: known.map((k) => k.command),
      changedFacts: copy.helloSince,
      judgedSince: copy.judgedSince,
      positions: copy.positions,
      pools: await tx.poolLoads(copy.pools, campaignId, now.getTime()),
      readyAt: deps.liveness.readyAt,
      gates:
        (row.campaign.spec.gates?.length ?? 0) > 0
          ? await tx.readGateResults(campaignId, row.campaign.currentBatch)
          : undefined,
      yanked: yanks.get(row.targetVersion),
      yankedPrevious: yanks,
    };
    let lastInput = input;
    let decision = decide(input);
    // Each round takes at least one more disabled node out of the offers (it is skipped, and a
    // freed slot may go to the next waiting node, which is checked in turn): at most one round
    // per node of the campaign. The first round that finds one also reads the rows of its
    // batch's other waiting nodes, so the next skips every disabled one it reaches: two
    // rounds, not one per disabled node (each a decision of the whole campaign).
    for (let round = 0; round < copy.nodes.length; round++) {
      const disabled = await disabledOffers(tx, decision, round === 0 ? copy.nodes : undefined);
      if (disabled.length === 0) break;
      deps.copies.noteRegistry(campaignId, disabled);
      lastInput = { ...input, facts: factsOf(deps, copy, now.getTime()) };
      decision = decide(lastInput);
    }
    if (deps.compareFullJudging !== undefined && input.judgedSince !== undefined) {
      const full = decide({
        ...lastInput,
        facts: lastInput.facts,
        judgedSince: undefined,
      });
      const difference = decisionDifference(decision, full);
      if (difference !== undefined) deps.compareFullJudging(campaignId, difference);
    }
    const outgoing: Outgoing[] = [];
    const newOps: NewOperation[] = [];
    const failedNodes: string[] = [];
    const publicUrl = deps.publicUrl();
    for (const action of decision.actions) {
      const built = buildOperation(action, {
        release,
        platform: platformOf(action.nodeId, deps.gateway, copy.registry),
        publicUrl,
      });
      newOps.push({
        id: action.operationId,
        campaignId,
        nodeId: action.nodeId,
        kind: action.kind,
        payload: built.ok ? built.payload : null,
        failure: built.ok ? undefined : built.failure,
      });
      // A late rollback waits in the outbox for its node's Hello on the target and its pool's
      // room (late-rollback.ts): never sent with its decision.
      const late = action.kind === "rollback" && action.late === true;
      if (!built.ok) failedNodes.push(action.nodeId);
      else if (!late) outgoing.push({ nodeId: action.nodeId, operation: built.operation });
    }
    const knownRows = known.map((k) => k.row);
    const outcomes = commandOutcomes(decision.events, knownRows);
    for (const r of stored) {
      if (!knownRows.includes(r)) outcomes.push({ id: r.id, outcome: "ignored: unknown command" });
    }
    decided = performance.now();
    const judged = deps.stalls
      ? (() => {
          const after = applyDecision(row.campaign, copy.nodes, decision);
          return judgeStall(deps.stalls, after.campaign, after.nodes, now.getTime());
        })()
      : { stall: undefined, audit: undefined };
    stall = judged.stall;
    const wrote = await tx.writeDecision({
      campaignId,
      version: row.version,
      // A stall report is an audit row without a change: it writes the campaign row as it
      // stands (the store writes audit rows only with a change).
      campaign: decision.changes.campaign ?? (judged.audit ? row.campaign : undefined),
      nodes: decision.changes.nodes,
      operations: newOps,
      appliedCommands: outcomes,
      audits: [
        ...auditRowsOf(campaignId, decision.events, knownRows),
        ...(judged.audit ? [judged.audit] : []),
      ],
      now,
    });
    committed = {
      version: wrote ? row.version + 1 : row.version,
      nodes: decision.changes.nodes,
      stale: failedNodes,
      seen: copy.helloSince,
      lookedAtWaiting: decision.lookedAtWaiting,
      judged: { mark: decision.judged, facts: copy.factsSeen },
    };
    const after = decision.changes.campaign ?? row.campaign;
    const finished = after.finishedAt !== undefined;
    return {
      live: true,
      decision,
      nodeIds: finished ? [] : copy.positions.keys(),
      outgoing,
      undeliverable: failedNodes.length,
      finished,
      campaign: after,
      timings: { read: 0, decide: 0, write: 0 },
    };
  });
  if (committed !== undefined) {
    const done: NonNullable<typeof committed> = committed;
    if (outcome.finished) deps.copies.forget(campaignId);
    else {
      deps.copies.commit(
        campaignId,
        done.version,
        done.nodes,
        done.seen,
        done.lookedAtWaiting,
        done.judged,
      );
      for (const nodeId of done.stale) deps.copies.markStale(campaignId, nodeId);
    }
  }
  if (committed !== undefined && deps.stalls) noteStall(deps.stalls, campaignId, stall);
  const end = performance.now();
  return {
    ...outcome,
    ...(stall === undefined ? {} : { stall }),
    timings: {
      read: Math.max(0, read - began),
      decide: Math.max(0, decided - read),
      write: Math.max(0, end - decided),
    },
  };
}

/**
 * The facts of a decision: built as asked, or, when the full decision is decided too, of every
 * node at once (both decisions then read the same facts, whatever arrives while they await).
 */
function factsOf(deps: DecisionDeps, copy: WorkingCopy, now: number): FactsLookup {
  const facts = buildFacts({
    gateway: deps.gateway,
    registry: copy.registry,
    stored: copy.stored,
    liveness: { ...deps.liveness, now },
    self: deps.self,
  });
  if (deps.compareFullJudging === undefined) return facts;
  return new Map(copy.nodes.map((n) => [n.nodeId, facts.get(n.nodeId) as NodeFacts]));
}

/**
 * The registry rows, read in the transaction, of the nodes a decision offers that are disabled.
 * Given the campaign's `nodes` and when one is found, also those of the disabled waiting nodes
 * of its batch: the working copy's rows of a batch it looked at are as old as that look (a
 * disable notifies no decision), so the others may be disabled too. One more read, linear in
 * the batch, instead of one decision of the whole campaign per disabled node.
 */
async function disabledOffers(
  tx: CampaignTransaction,
  decision: Decision,
  nodes?: readonly CampaignNode[],
): Promise<NodeRegistryRow[]> {
  const offered = decision.actions.filter((a) => a.kind === "upgrade").map((a) => a.nodeId);
  if (offered.length === 0) return [];
  const found = (await tx.readRegistry(offered)).filter((r) => !r.enabled);
  if (found.length === 0 || nodes === undefined) return found;
  const offeredIds = new Set(offered);
  const foundIds = new Set(found.map((r) => r.id));
  const batches = new Set(nodes.filter((n) => foundIds.has(n.nodeId)).map((n) => n.batch));
  const others = nodes
    .filter((n) => n.state === "waiting" && batches.has(n.batch) && !offeredIds.has(n.nodeId))
    .map((n) => n.nodeId);
  if (others.length === 0) return found;
  return [...found, ...(await tx.readRegistry(others)).filter((r) => !r.enabled)];
}

/**
 * The versions whose yanks a decision reads: the target's, and every previous version of the
 * campaign's nodes (a rollback onto a yanked one is withheld, `rollback.ts`).
 */
export function yankVersions(target: string, nodes: readonly CampaignNode[]): string[] {
  const versions = new Set<string>([target]);
  for (const n of nodes) if (n.previousVersion !== undefined) versions.add(n.previousVersion);
  return [...versions];
}
