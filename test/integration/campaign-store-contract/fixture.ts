/**
 * What a campaign store contract test holds: one adapter's store on fresh tables, with the
 * seeding and inspection the port (control/campaign-store/port.ts) lacks.
 */
import type {
  CampaignStore,
  NodeRegistryRow,
  OfferRelease,
} from "../../../control/campaign-store/index.js";

/** A registry row as a fixture seeds it. */
export type RegistryInput = NodeRegistryRow & { readonly pool: string };

/** A registered release as a fixture seeds it: the envelope file bytes as registered. */
export interface ReleaseInput {
  readonly version: string;
  readonly sequence: number;
  readonly envelope: Uint8Array;
  readonly artifacts: OfferRelease["artifacts"];
  /** When it expires (epoch ms). */
  readonly expiresAt: number;
}

/** The stored columns of an outbox row the port does not read back. */
export interface OperationStamps {
  readonly acked_at: Date | null;
  readonly last_sent_at: Date | null;
  readonly send_count: number;
}

/** One adapter's store on fresh tables, with the seeding and inspection the port lacks. */
export interface Fixture {
  readonly store: CampaignStore;
  putNode(row: RegistryInput): Promise<void>;
  /** The node says Hello on `version`: its registry row's `agent_version` (as the fleet store writes it). */
  helloOn(nodeId: string, version: string): Promise<void>;
  putRelease(release: ReleaseInput): Promise<void>;
  /** Yanks a registered release as `agentctl release yank` does (the first yank stays). */
  yankRelease(version: string, reason: string, at: Date, by: string): Promise<void>;
  /** Records an administrator command as the admin API does; returns its id. */
  addCommand(campaignId: string, kind: string, rollback: boolean): Promise<string>;
  /** Ends the database session of the lease's holder, as when its process is killed. */
  endSession(holder: string): Promise<void>;
  /** Resolves once a lease statement is waiting for a transaction (a bounded wait in memory). */
  untilLeaseWaits(): Promise<void>;
  operation(id: string): Promise<OperationStamps | undefined>;
  /** The registry's confirmed sequence of a node (undefined for an unknown node). */
  confirmedSequence(nodeId: string): Promise<number | undefined>;
  command(id: string): Promise<{ applied_at: Date | null; outcome: string | null } | undefined>;
  audits(
    campaignId: string,
  ): Promise<{ action: string; actor: string; message: string; time: Date }[]>;
}

/** How a suite opens an adapter: once per file, a fresh fixture per test. */
export interface Adapter {
  readonly name: string;
  open(): Promise<void>;
  fresh(): Promise<Fixture>;
  close(): Promise<void>;
}
