/**
 * The fixtures of the fleet store contract (`fleet-store-contract.test.ts`): the PostgreSQL
 * and memory adapters of the fleet store port, each opening a fresh, empty store per test,
 * and the builders of the campaigns and desired versions the tests store.
 */
import {
  type CampaignNode,
  createCampaign,
  type DesiredVersion,
  desiredIdOf,
  type NodeState,
  planCampaign,
  resolveSpec,
} from "../../control/campaign/index.js";
import {
  type CampaignStore,
  createSqlCampaignStore,
  createSqlFleetStore,
  type FleetStore,
  MemoryCampaignStore,
  MemoryFleetStore,
} from "../../control/campaign-store/index.js";
import { systemClock } from "../../control/clock.js";
import { type Database, openDatabase } from "../../control/db/database.js";
import { createLogger } from "../../control/log.js";
import { ManualClock } from "../../control/manual-clock.js";
import { createTestDatabase, type TestDatabase } from "../helpers/database.js";

export const T0 = Date.UTC(2031, 0, 1);
export const at = (ms: number) => new Date(T0 + ms);
const silent = createLogger({ level: "silent" });

export interface NodeInput {
  readonly id: string;
  readonly pool?: string;
  readonly labels?: Record<string, string>;
  readonly version?: string;
  /** Default linux-amd64. */
  readonly platform?: string;
  readonly confirmed?: number;
  readonly online?: boolean;
  readonly heldBy?: string;
  readonly enabled?: boolean;
  readonly everConnected?: boolean;
}

export interface Fixture {
  readonly campaigns: CampaignStore;
  readonly fleet: FleetStore;
  putNode(n: NodeInput): Promise<void>;
  putRelease(version: string, sequence: number): Promise<void>;
}

export interface Adapter {
  readonly name: string;
  open(): Promise<void>;
  fresh(): Promise<Fixture>;
  close(): Promise<void>;
}

export function sqlAdapter(): Adapter {
  let testDb: TestDatabase | undefined;
  let db: Database | undefined;
  return {
    name: "PostgreSQL",
    async open() {
      testDb = await createTestDatabase("fleet_contract");
      db = await openDatabase({ url: testDb.url, log: silent });
    },
    async close() {
      await db?.close();
      await testDb?.drop();
    },
    async fresh() {
      const pool = (db as Database).pool;
      await pool.query(
        `truncate nodes, releases, campaigns, campaign_nodes, audit_events, desired_versions,
           rollout_plans restart identity cascade`,
      );
      return {
        campaigns: createSqlCampaignStore(db as Database, silent, systemClock),
        fleet: createSqlFleetStore(pool),
        async putNode(n) {
          await pool.query(
            `insert into nodes (id, labels, pool, agent_version, capabilities, confirmed_sequence,
                first_seen, online, held_by, enabled, platform)
             values ($1, $2, $3, $4, '["upgrade.v1"]'::jsonb, $5, $6, $7, $8, $9, $10)`,
            [
              n.id,
              JSON.stringify(n.labels ?? {}),
              n.pool ?? "p",
              n.version ?? "1.0.0",
              n.confirmed ?? 1,
              n.everConnected === false ? null : at(0),
              n.online ?? false,
              n.heldBy ?? null,
              n.enabled ?? true,
              n.platform ?? "linux-amd64",
            ],
          );
        },
        async putRelease(version, sequence) {
          await pool.query(
            `insert into releases (version, sequence, envelope, envelope_sha256, expires_at,
                registered_at, registered_by, signer_key_ids, artifacts)
             values ($1, $2, '\\x00', '00', $3, $3, 'tester', '[]'::jsonb, '[]'::jsonb)`,
            [version, sequence, at(7 * 24 * 3_600_000)],
          );
        },
      };
    },
  };
}

export function memoryAdapter(): Adapter {
  return {
    name: "memory",
    async open() {},
    async close() {},
    async fresh() {
      const store = new MemoryCampaignStore(new ManualClock(T0));
      return {
        campaigns: store,
        fleet: new MemoryFleetStore(store),
        async putNode(n) {
          store.putNode({
            id: n.id,
            pool: n.pool ?? "p",
            labels: n.labels ?? {},
            boot_id: "b",
            agent_version: n.version ?? "1.0.0",
            capabilities: ["upgrade.v1"],
            platform: n.platform ?? "linux-amd64",
            enabled: n.enabled ?? true,
            last_seen: n.everConnected === false ? null : at(0),
            online: n.online ?? false,
            held_by: n.heldBy ?? null,
            confirmed_sequence: n.confirmed ?? 1,
          });
        },
        async putRelease(version, sequence) {
          store.tables.releases.set(version, {
            version,
            sequence,
            envelope: { payloadType: "", payload: new Uint8Array(), signatures: [] },
            artifacts: [],
          });
        },
      };
    },
  };
}

export const SPEC = resolveSpec({
  targetVersion: "2.0.0",
  selector: { pools: ["p"] },
  batches: [{ percent: 100, minDurationMs: 0 }],
});

/** A campaign over `nodes` with the given node states, created at `createdAt`. */
export function campaignOf(id: string, nodes: Record<string, NodeState>, createdAt: number) {
  const plan = planCampaign(
    SPEC,
    Object.keys(nodes).map((nodeId) => ({
      id: nodeId,
      labels: {},
      pool: "p",
      enabled: true,
      everConnected: true,
      capabilities: ["upgrade.v1"],
      agentVersion: "1.0.0",
    })),
  );
  const c = createCampaign({
    id,
    spec: SPEC,
    plan,
    target: { version: "2.0.0", sequence: 2 },
    now: createdAt,
  });
  const records: CampaignNode[] = c.nodes.map((n) => ({
    ...n,
    state: nodes[n.nodeId] as NodeState,
  }));
  return { campaign: c.campaign, nodes: records };
}

export function desired(over: Partial<DesiredVersion> = {}): DesiredVersion {
  const selector = { labels: {}, pools: ["p"], nodeIds: [] };
  const exclude = { nodeIds: [], tags: {} };
  return {
    id: desiredIdOf(selector, exclude),
    selector,
    exclude,
    target: { version: "2.0.0", sequence: 2 },
    setAt: T0 + 100,
    setBy: "campaign:c1",
    settings: {
      reconnectTimeoutMs: 60_000,
      configGraceMs: 0,
      disruptionBudgetPercent: 5,
      maxFailures: 3,
    },
    haltedAt: undefined,
    haltedReason: undefined,
    ...over,
  };
}
