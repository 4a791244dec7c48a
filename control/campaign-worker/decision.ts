/**
 * One decision for one campaign, as a unit of work: in ONE transaction, fence the lease,
 * lock the campaign row, read its nodes, pending commands and persisted facts, run the pure
 * `decide`, and write its changes, outbox rows, applied commands and audit rows. The caller
 * sends the returned operations only after this commit.
 */
import type pg from "pg";
import {
  type AdminCommand,
  type CampaignNode,
  type Decision,
  decide,
  isFinal,
} from "../campaign/index.js";
import type { Clock } from "../clock.js";
import { auditRowsOf, commandOutcomes } from "./audit.js";
import { buildFacts, platformOf, type WorkerGateway } from "./facts.js";
import type { LeaderLease } from "./lease.js";
import { buildOperation, type OfferRelease } from "./operations.js";
import type { Outgoing } from "./outbox.js";
import { type CommandRow, commandOf } from "./rows.js";
import {
  inTransaction,
  type NewOperation,
  pendingCommands,
  readCampaign,
  readConfigFailures,
  readNodes,
  readOperationFacts,
  readRegistry,
  writeDecision,
} from "./store.js";

/** What one decision needs. */
export interface DecisionDeps {
  readonly pool: pg.Pool;
  readonly lease: LeaderLease;
  readonly gateway: WorkerGateway;
  readonly clock: Clock;
  /** The target release with its envelope (cached by the caller). */
  readonly release: (version: string) => Promise<OfferRelease | undefined>;
  readonly publicUrl: () => string;
}

/** The outcome of {@link runDecision}. */
export interface DecisionOutcome {
  /** False when the campaign does not exist or had already finished. */
  readonly live: boolean;
  readonly decision: Decision | undefined;
  /** Every node of the campaign after the decision. */
  readonly nodeIds: readonly string[];
  /** Operations committed to the outbox, to send now. */
  readonly outgoing: readonly Outgoing[];
  /** Operations that could not be built: decide again to judge them. */
  readonly undeliverable: number;
  readonly finished: boolean;
}

const NOTHING: DecisionOutcome = {
  live: false,
  decision: undefined,
  nodeIds: [],
  outgoing: [],
  undeliverable: 0,
  finished: true,
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
  const release = await (async () => {
    const row = await readCampaign(deps.pool, campaignId);
    return row && row.finishedAt === undefined ? deps.release(row.targetVersion) : undefined;
  })();
  return await inTransaction(deps.pool, async (client) => {
    await deps.lease.fence(client);
    const row = await readCampaign(client, campaignId, true);
    if (!row || row.finishedAt !== undefined) return NOTHING;
    const nodes = await readNodes(client, campaignId);
    const stored = await pendingCommands(client, campaignId);
    const known: { row: CommandRow; command: AdminCommand }[] = [];
    for (const r of stored) {
      const command = commandOf(r);
      if (command) known.push({ row: r, command });
    }
    const open = nodes.filter((n) => !isFinal(n.state)).map((n) => n.nodeId);
    const registry = await readRegistry(client, open);
    const operations = await readOperationFacts(client, campaignId);
    const configFailures = await readConfigFailures(client, campaignId);
    const now = deps.clock.now();
    const facts = buildFacts({
      nodeIds: open,
      gateway: deps.gateway,
      registry,
      operations,
      configFailures,
    });
    const decision = decide({
      campaign: row.campaign,
      nodes,
      facts,
      now: now.getTime(),
      target: { version: row.targetVersion, sequence: row.campaign.targetSequence },
      commands: known.map((k) => k.command),
    });
    const registryById = new Map(registry.map((r) => [r.id, r]));
    const outgoing: Outgoing[] = [];
    const newOps: NewOperation[] = [];
    let undeliverable = 0;
    for (const action of decision.actions) {
      const built = buildOperation(action, {
        release,
        platform: platformOf(action.nodeId, deps.gateway, registryById),
        publicUrl: deps.publicUrl(),
      });
      newOps.push({
        id: action.operationId,
        campaignId,
        nodeId: action.nodeId,
        kind: action.kind,
        payload: built.ok ? built.payload : null,
        failure: built.ok ? undefined : built.failure,
      });
      if (built.ok) outgoing.push({ nodeId: action.nodeId, operation: built.operation });
      else undeliverable++;
    }
    const knownRows = known.map((k) => k.row);
    const outcomes = commandOutcomes(decision.events, knownRows);
    for (const r of stored) {
      if (!knownRows.includes(r)) outcomes.push({ id: r.id, outcome: "ignored: unknown command" });
    }
    await writeDecision(client, {
      campaignId,
      version: row.version,
      campaign: decision.changes.campaign,
      nodes: decision.changes.nodes,
      operations: newOps,
      appliedCommands: outcomes,
      audits: auditRowsOf(campaignId, decision.events, knownRows),
      now,
    });
    const after = decision.changes.campaign ?? row.campaign;
    return {
      live: true,
      decision,
      nodeIds: nodes.map((n: CampaignNode) => n.nodeId),
      outgoing,
      undeliverable,
      finished: after.finishedAt !== undefined,
    };
  });
}
