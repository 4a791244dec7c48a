/**
 * What the outcome invariants (`outcome-invariants.ts`, `rollback-invariants.ts`) read of the
 * simulated world and remember between steps: the stores holding Control's claims, the fleet's
 * ground truth, the nodes disabled and the commands the simulated operator issued.
 */
import type { MemoryCampaignStore, MemoryFleetStore } from "../control/campaign-store/index.js";
import type { SimFleet } from "./agents.js";

/** An operator's command, as the simulated operator issued it. */
export interface IssuedCommand {
  readonly campaignId: string;
  readonly kind: "pause" | "resume" | "abort" | "skip_gate";
  readonly at: number;
  /** An abort's rollback flag. */
  readonly rollback?: boolean;
  /** The campaign's phase when the command was issued. */
  readonly phase?: string | undefined;
}

/** What the outcome checks remember between steps. */
export interface OutcomeCheckState {
  /** Per agent, how many of its sends and runs were checked. */
  readonly sentChecked: Map<string, number>;
  readonly runsChecked: Map<string, number>;
  /** Campaigns whose claimed end (O1, O2) was judged. */
  readonly judged: Set<string>;
  /** Campaigns whose finished rollback (I2) was judged. */
  readonly finishJudged: Set<string>;
  /**
   * Per campaign, the nodes owed its late rollback when it said it rolled back or finished
   * (`owesLateRollback`, rollback-invariants.ts): judged at the end of the run.
   */
  readonly owedLate: Map<string, Set<string>>;
  /** When each campaign was first seen aborted (the command had taken effect). */
  readonly abortedAt: Map<string, number>;
  /** Every command the simulated operator issued. */
  readonly commands: IssuedCommand[];
}

/** A fresh state. */
export function newOutcomeCheckState(): OutcomeCheckState {
  return {
    sentChecked: new Map(),
    runsChecked: new Map(),
    judged: new Set(),
    finishJudged: new Set(),
    owedLate: new Map(),
    abortedAt: new Map(),
    commands: [],
  };
}

/** What the checks read of the world. */
export interface OutcomeWorld {
  readonly store: MemoryCampaignStore;
  readonly fleetStore: MemoryFleetStore;
  readonly fleet: SimFleet;
  /** Nodes disabled so far, with when. */
  readonly disabledAt: ReadonlyMap<string, number>;
  readonly state: OutcomeCheckState;
  /**
   * How far a Control's stamps (a batch's end, a campaign's finish) may be off the reference
   * clock the agents' records use (`clock-faults.ts`); 0 when every Control runs on it.
   */
  readonly clockToleranceMs?: number;
}

/** The id of a campaign's operation of `kind` on a node, as the agents' records hold it. */
export const opId = (campaignId: string, nodeId: string, kind: string): string =>
  `${campaignId}/${nodeId}/${kind}`;
