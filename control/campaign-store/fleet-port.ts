/**
 * The fleet store port: what the fleet-level rules read and write beside campaigns — desired
 * versions, rollout plans, the fleet as convergence sees it, and starting a campaign from the
 * leader's worker — with a PostgreSQL adapter (`sql/fleet.ts`) and a memory adapter
 * (`memory/memory-fleet.ts`) held to the same contract tests. A fleet transaction wraps a
 * campaign transaction ({@link FleetTransaction.campaigns}), so a lease fence, a campaign
 * insert and the fleet rows commit together. With its node writes ({@link FleetTransaction.nodes})
 * it is the admin store: every administrator's command runs over it, in Control and in the
 * simulation alike.
 */
import {
  type CampaignPhase,
  type DesiredVersion,
  FAILURE_NODE_STATES,
  type NodeState,
  type RolloutPlan,
} from "../campaign/index.js";
import type { AdminNodes } from "./admin-port.js";
import type { AuditRow, CampaignTransaction } from "./port.js";

/** A node's registry row as the fleet rules read it. */
export interface FleetRow {
  readonly id: string;
  readonly labels: Record<string, string>;
  readonly pool: string;
  readonly enabled: boolean;
  /** It completed a Hello once. */
  readonly everConnected: boolean;
  readonly capabilities: string[];
  /** "" when unknown. */
  readonly agentVersion: string;
  /** Its platform as its last Hello said; "" when unknown. */
  readonly platform: string;
  readonly confirmedSequence: number;
  /** The sequence of the registered release it runs, when there is one. */
  readonly runningSequence: number | undefined;
  /** The registry says a stream of it is open (on the Control `heldBy`). */
  readonly online: boolean;
  readonly heldBy: string | null;
  /** It is in an unfinished campaign that still counts it (see `busyNodes`). */
  readonly busy: boolean;
  /** The oldest such campaign while `busy` (its id), else undefined. */
  readonly busyIn: string | undefined;
}

/** A campaign as the fleet rules read it. */
export interface CampaignSummary {
  readonly id: string;
  readonly createdBy: string;
  readonly phase: CampaignPhase;
  readonly createdAt: number;
  readonly finishedAt: number | undefined;
  /** Node ids per final failure state (failed, timed_out). */
  readonly failedNodeIds: readonly string[];
}

/** A completed campaign whose target is not yet recorded as a desired version. */
export interface CompletedCampaign {
  readonly id: string;
  readonly createdBy: string;
  readonly finishedAt: number;
}

/** A stored plan with its row version (a write names the version it read). */
export interface PlanRow {
  readonly plan: RolloutPlan;
  readonly version: number;
}

/** Thrown when a plan row changed since it was read. */
export class PlanVersionConflict extends Error {
  override readonly name = "PlanVersionConflict";
}

/** The reads and writes of one fleet transaction. */
export interface FleetTransaction {
  /** The campaign transaction it runs in (fence, campaign reads, `insertCampaign`). */
  readonly campaigns: CampaignTransaction;
  /** The registry writes of the administrators' node commands (`admin-port.ts`). */
  readonly nodes: AdminNodes;
  /** Serialises campaign starts (the admin API's and the worker's) until the transaction ends. */
  lockStarts(): Promise<void>;
  /** Every node of the registry, with its running sequence and whether it is busy. */
  readFleet(): Promise<FleetRow[]>;
  /**
   * The fleet's canary-order secret: random, created with the database and never changed, so
   * canary order is the same on every Control and between a plan and its start (the memory
   * store answers `FIXED_ORDER_SECRET`).
   */
  readOrderSecret(): Promise<string>;
  /** Every desired version, oldest first. */
  readDesired(): Promise<DesiredVersion[]>;
  /** Inserts or replaces the desired version with `d.id`. */
  writeDesired(d: DesiredVersion): Promise<void>;
  /** Deletes a desired version; false when there was none. */
  deleteDesired(id: string): Promise<boolean>;
  /** Completed, finished campaigns not yet recorded as a desired version, oldest finish first. */
  completionsToRecord(): Promise<CompletedCampaign[]>;
  /** Marks campaigns as recorded (a completed campaign is recorded once). */
  markRecorded(campaignIds: readonly string[]): Promise<void>;
  /** The campaigns whose `created_by` starts with `prefix`, oldest first. */
  campaignsCreatedBy(prefix: string): Promise<CampaignSummary[]>;
  /** The campaigns `ids` (unknown ids left out). */
  campaignSummaries(ids: readonly string[]): Promise<CampaignSummary[]>;
  /** Plans, newest first; only unended ones with `live`. */
  readPlans(live: boolean): Promise<PlanRow[]>;
  readPlan(id: string): Promise<PlanRow | undefined>;
  /** Inserts a plan (version 1). */
  insertPlan(plan: RolloutPlan, now: Date): Promise<void>;
  /**
   * Writes a plan read at `version` (bumping it).
   * @throws PlanVersionConflict when the row is no longer at `version`.
   */
  writePlan(plan: RolloutPlan, version: number, now: Date): Promise<void>;
  /** Inserts audit rows, in order. */
  insertAudits(rows: readonly AuditRow[], now: Date): Promise<void>;
  /**
   * Records an administrator's command for the leader's worker to apply (unapplied, at `now`);
   * returns its id, unique in the store.
   */
  insertCommand(command: NewCommand, now: Date): Promise<string>;
}

/** An administrator's command to record (see {@link FleetTransaction.insertCommand}). */
export interface NewCommand {
  readonly campaignId: string;
  readonly kind: string;
  readonly rollback: boolean;
  /** The gate a `skip_gate` command names (its index); absent for other kinds. */
  readonly gate?: number | undefined;
  readonly reason: string;
  readonly actor: string;
  readonly actorIp: string;
}

/** The fleet store. */
export interface FleetStore {
  /** Runs `work` in one transaction; rolls it back when `work` throws. */
  transaction<T>(work: (tx: FleetTransaction) => Promise<T>): Promise<T>;
}

/**
 * The node states that end a campaign node as a failure (convergence counts them): the
 * engine's failure states (`NodeStateTraits.failure`).
 */
export const FAILED_NODE_STATES: readonly NodeState[] = FAILURE_NODE_STATES;
