/**
 * The contract of the campaign store port (control/campaign-store/port.ts), run against both
 * adapters: the PostgreSQL one (the product, on a real database) and the memory one (unit
 * tests and the deterministic simulation). Every test runs on a fresh, empty store; times are
 * fixed (the memory store runs on a manual clock; lease takeovers follow a session's end, not
 * a TTL).
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  type CampaignNode,
  createCampaign,
  NODE_STATES,
  type NodeState,
  operationId,
  planCampaign,
  resolveSpec,
} from "../../control/campaign/index.js";
import {
  type CampaignStore,
  CampaignVersionConflict,
  createSqlCampaignStore,
  type LeaderLease,
  MemoryCampaignStore,
  type NewOperation,
  type NodeRegistryRow,
  type OfferRelease,
  StaleLeaderError,
} from "../../control/campaign-store/index.js";
import { systemClock } from "../../control/clock.js";
import { type Database, openDatabase } from "../../control/db/database.js";
import { createLogger } from "../../control/log.js";
import { ManualClock } from "../../control/manual-clock.js";
import { parseEnvelope, sha256Hex } from "../../control/shared/release/index.js";
import { createTestDatabase, type TestDatabase } from "../helpers/database.js";
import { makeKeys, makeRelease } from "../helpers/releases.js";

const T0 = Date.UTC(2031, 0, 1);
const at = (ms: number) => new Date(T0 + ms);
const TARGET = "2.0.0";
const TTL_MS = 60_000;

/** A registry row as a fixture seeds it. */
type RegistryInput = NodeRegistryRow & { readonly pool: string };

/** A registered release as a fixture seeds it: the envelope file bytes as registered. */
interface ReleaseInput {
  readonly version: string;
  readonly sequence: number;
  readonly envelope: Uint8Array;
  readonly artifacts: OfferRelease["artifacts"];
}

/** The stored columns of an outbox row the port does not read back. */
interface OperationStamps {
  readonly acked_at: Date | null;
  readonly last_sent_at: Date | null;
  readonly send_count: number;
}

/** One adapter's store on fresh tables, with the seeding and inspection the port lacks. */
interface Fixture {
  readonly store: CampaignStore;
  putNode(row: RegistryInput): Promise<void>;
  putRelease(release: ReleaseInput): Promise<void>;
  /** Records an administrator command as the admin API does; returns its id. */
  addCommand(campaignId: string, kind: string, rollback: boolean): Promise<string>;
  /** Ends the database session of the lease's holder, as when its process is killed. */
  endSession(holder: string): Promise<void>;
  /** Resolves once a lease statement is waiting for a transaction (a bounded wait in memory). */
  untilLeaseWaits(): Promise<void>;
  operation(id: string): Promise<OperationStamps | undefined>;
  command(id: string): Promise<{ applied_at: Date | null; outcome: string | null } | undefined>;
  audits(
    campaignId: string,
  ): Promise<{ action: string; actor: string; message: string; time: Date }[]>;
}

/** How a suite opens an adapter: once per file, a fresh fixture per test. */
interface Adapter {
  readonly name: string;
  open(): Promise<void>;
  fresh(): Promise<Fixture>;
  close(): Promise<void>;
}

const silent = createLogger({ level: "silent" });

function sqlAdapter(): Adapter {
  let testDb: TestDatabase | undefined;
  let db: Database | undefined;
  const database = () => db as Database;
  return {
    name: "PostgreSQL",
    async open() {
      testDb = await createTestDatabase("store_contract");
      db = await openDatabase({ url: testDb.url, log: silent });
    },
    async close() {
      await db?.close();
      await testDb?.drop();
    },
    async fresh() {
      const pool = database().pool;
      await pool.query(
        `truncate nodes, releases, campaigns, campaign_nodes, campaign_operations,
           campaign_config_failures, campaign_commands, control_leases, audit_events
         restart identity cascade`,
      );
      return {
        store: createSqlCampaignStore(database(), silent, systemClock),
        async putNode(row) {
          await pool.query(
            `insert into nodes (id, pool, boot_id, agent_version, capabilities, platform, enabled,
                last_seen, online, held_by)
             values ($1, $2, $3, $4, $5::jsonb, $6, $7, $8, $9, $10)`,
            [
              row.id,
              row.pool,
              row.boot_id,
              row.agent_version,
              JSON.stringify(row.capabilities),
              row.platform,
              row.enabled,
              row.last_seen,
              row.online ?? false,
              row.held_by ?? null,
            ],
          );
        },
        async putRelease(r) {
          await pool.query(
            `insert into releases (version, sequence, envelope, envelope_sha256, expires_at,
                registered_at, registered_by, signer_key_ids, artifacts)
             values ($1, $2, $3, $4, $5, $6, 'tester', '[]'::jsonb, $7::jsonb)`,
            [
              r.version,
              r.sequence,
              Buffer.from(r.envelope),
              sha256Hex(r.envelope),
              at(7 * 24 * 3_600_000),
              at(0),
              JSON.stringify(r.artifacts),
            ],
          );
        },
        async addCommand(campaignId, kind, rollback) {
          const result = await pool.query<{ id: string }>(
            `insert into campaign_commands (campaign_id, kind, rollback, reason, actor, actor_ip,
                created_at)
             values ($1, $2, $3, $4, 'operator', '10.0.0.1', $5) returning id::text as id`,
            [campaignId, kind, rollback, `${kind} please`, at(0)],
          );
          return result.rows[0]?.id as string;
        },
        async endSession(holder) {
          const rows = await pool.query<{ pid: number }>(
            "select holder_pid as pid from control_leases where holder = $1",
            [holder],
          );
          for (const { pid } of rows.rows) {
            await pool.query("select pg_terminate_backend($1, 10000)", [pid]);
          }
        },
        async untilLeaseWaits() {
          for (let i = 0; i < 500; i++) {
            const waiting = await pool.query<{ n: number }>(
              "select count(*)::int as n from pg_locks where not granted",
            );
            if ((waiting.rows[0]?.n ?? 0) > 0) return;
            await new Promise((resolve) => setTimeout(resolve, 10));
          }
          throw new Error("no lease statement waited for the transaction");
        },
        async operation(id) {
          const result = await pool.query<OperationStamps>(
            "select acked_at, last_sent_at, send_count from campaign_operations where id = $1",
            [id],
          );
          return result.rows[0];
        },
        async command(id) {
          const result = await pool.query<{ applied_at: Date | null; outcome: string | null }>(
            "select applied_at, outcome from campaign_commands where id = $1",
            [id],
          );
          return result.rows[0];
        },
        async audits(campaignId) {
          const result = await pool.query<{
            action: string;
            actor: string;
            message: string;
            time: Date;
          }>(
            "select action, actor, message, time from audit_events where campaign_id = $1 order by id",
            [campaignId],
          );
          return result.rows;
        },
      };
    },
  };
}

function memoryAdapter(): Adapter {
  return {
    name: "memory",
    async open() {},
    async close() {},
    async fresh() {
      const store = new MemoryCampaignStore(new ManualClock(T0));
      const t = store.tables;
      return {
        store,
        async putNode(row) {
          store.putNode(row);
        },
        async putRelease(r) {
          t.releases.set(r.version, {
            version: r.version,
            sequence: r.sequence,
            envelope: parseEnvelope(r.envelope),
            artifacts: r.artifacts,
          });
        },
        async addCommand(campaignId, kind, rollback) {
          return t.addCommand({
            campaignId,
            kind,
            rollback,
            reason: `${kind} please`,
            actor: "operator",
            actor_ip: "10.0.0.1",
          });
        },
        async endSession(holder) {
          store.endSession(holder);
        },
        async untilLeaseWaits() {
          for (let i = 0; i < 10; i++) await new Promise((resolve) => setImmediate(resolve));
        },
        async operation(id) {
          const o = t.operations.get(id);
          return o === undefined
            ? undefined
            : { acked_at: o.ackedAt, last_sent_at: o.lastSentAt, send_count: o.sendCount };
        },
        async command(id) {
          const c = t.commands.find((x) => x.id === id);
          return c === undefined ? undefined : { applied_at: c.appliedAt, outcome: c.outcome };
        },
        async audits(campaignId) {
          return t.audits
            .filter((a) => a.campaignId === campaignId)
            .map((a) => ({ action: a.action, actor: a.actor, message: a.message, time: a.time }));
        },
      };
    },
  };
}

/** A campaign node as a test wants it. */
interface NodeSpec {
  readonly id: string;
  readonly pool?: string;
  readonly state?: NodeState;
  readonly graceEndsAt?: number;
}

const SPEC = resolveSpec({
  targetVersion: TARGET,
  batches: [{ percent: 100, minDurationMs: 0 }],
  reconnectTimeoutMs: 3_600_000,
});

/** A running campaign of `nodes` (one batch, canary order by node id hash). */
function campaignOf(id: string, nodes: readonly NodeSpec[], createdAt = T0) {
  const plan = planCampaign(
    SPEC,
    nodes.map((n) => ({
      id: n.id,
      labels: {},
      pool: n.pool ?? "p",
      enabled: true,
      everConnected: true,
      capabilities: ["upgrade.v1"],
      agentVersion: "1.0.0",
    })),
  );
  const created = createCampaign({
    id,
    spec: SPEC,
    plan,
    target: { version: TARGET, sequence: 2 },
    now: createdAt,
  });
  const wanted = new Map(nodes.map((n) => [n.id, n]));
  const records: CampaignNode[] = created.nodes.map((node) => {
    const want = wanted.get(node.nodeId) as NodeSpec;
    return { ...node, state: want.state ?? "waiting", graceEndsAt: want.graceEndsAt };
  });
  return { campaign: created.campaign, nodes: records };
}

const payloadOf = (id: string) => new TextEncoder().encode(`payload of ${id}`);
const textOf = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

/** An outbox row for `writeDecision`: a deliverable payload unless said otherwise. */
function op(
  campaignId: string,
  nodeId: string,
  kind: string,
  extra: Partial<Pick<NewOperation, "payload" | "failure" | "id">> = {},
): NewOperation {
  const id = extra.id ?? operationId(campaignId, nodeId, kind as "upgrade");
  return {
    id,
    campaignId,
    nodeId,
    kind,
    payload: extra.payload === undefined ? payloadOf(id) : extra.payload,
    failure: extra.failure,
  };
}

describe.each([sqlAdapter(), memoryAdapter()])("the $name campaign store", (adapter) => {
  let fx: Fixture;
  let store: CampaignStore;
  const leases: LeaderLease[] = [];
  beforeAll(() => adapter.open());
  afterAll(() => adapter.close());
  beforeEach(async () => {
    fx = await adapter.fresh();
    store = fx.store;
  });
  afterEach(async () => {
    for (const lease of leases.splice(0)) await lease.release();
  });

  /** Inserts campaign `id` with `nodes` (in reverse canary order, as a shuffle) at `createdAt`. */
  async function insert(id: string, nodes: readonly NodeSpec[], createdAt = T0) {
    const c = campaignOf(id, nodes, createdAt);
    await store.transaction((tx) =>
      tx.insertCampaign({
        campaign: c.campaign,
        nodes: [...c.nodes].reverse(),
        createdBy: "tester",
        createdByIp: "127.0.0.1",
        now: new Date(createdAt),
      }),
    );
    return c;
  }

  /** Writes outbox rows onto campaign `id` at `now` (a decision of its current version). */
  async function addOperations(id: string, operations: readonly NewOperation[], now: Date) {
    return store.transaction(async (tx) => {
      const row = await tx.readCampaign(id, true);
      return tx.writeDecision({
        campaignId: id,
        version: row?.version ?? 0,
        campaign: undefined,
        nodes: [],
        operations,
        appliedCommands: [],
        audits: [],
        now,
      });
    });
  }

  const versionOf = async (id: string) =>
    store.transaction(async (tx) => (await tx.readCampaign(id))?.version);

  const unacked = async (filter: Parameters<CampaignStore["unackedOperations"]>[0] = {}) =>
    (await store.unackedOperations(filter)).map((o) => ({
      nodeId: o.nodeId,
      id: o.operation.id,
      payload: textOf(o.operation.bytes),
    }));
  const unackedIds = async (filter: Parameters<CampaignStore["unackedOperations"]>[0] = {}) =>
    (await unacked(filter)).map((o) => o.id);

  const lease = (holder: string, onLost?: (why: string) => void) => {
    const l = store.lease({ holder, ttlMs: TTL_MS, ...(onLost ? { onLost } : {}) });
    leases.push(l);
    return l;
  };

  describe("transactions", () => {
    it("commits every write of a transaction and returns what its work returned", async () => {
      const c = await insert("c1", [{ id: "n1" }]);
      const result = await store.transaction(async (tx) => {
        const row = await tx.readCampaign("c1", true);
        await tx.writeDecision({
          campaignId: "c1",
          version: row?.version ?? 0,
          campaign: { ...c.campaign, phase: "paused", pausedAt: T0 + 5 },
          nodes: [],
          operations: [],
          appliedCommands: [],
          audits: [],
          now: at(5),
        });
        return "done";
      });
      expect(result).toBe("done");
      expect(await versionOf("c1")).toBe(2);
    });

    it("writes nothing when its work throws, and rethrows the error", async () => {
      const c = await insert("c1", [{ id: "n1" }]);
      const other = campaignOf("c2", [{ id: "n2" }], T0 + 1);
      await expect(
        store.transaction(async (tx) => {
          await tx.insertCampaign({
            campaign: other.campaign,
            nodes: other.nodes,
            createdBy: "tester",
            createdByIp: "127.0.0.1",
            now: at(1),
          });
          await tx.writeDecision({
            campaignId: "c1",
            version: 1,
            campaign: { ...c.campaign, phase: "paused", pausedAt: T0 + 5 },
            nodes: [{ ...(c.nodes[0] as CampaignNode), state: "offered" }],
            operations: [op("c1", "n1", "upgrade")],
            appliedCommands: [],
            audits: [],
            now: at(5),
          });
          throw new Error("boom");
        }),
      ).rejects.toThrow("boom");
      expect(await store.liveCampaignIds()).toEqual(["c1"]);
      const row = await store.transaction((tx) => tx.readCampaign("c1"));
      expect(row?.version).toBe(1);
      expect(row?.campaign.phase).toBe("running");
      expect((await store.transaction((tx) => tx.readNodes("c1")))[0]?.state).toBe("waiting");
      expect(await store.transaction((tx) => tx.readCampaign("c2"))).toBeUndefined();
      expect(await fx.operation(operationId("c1", "n1", "upgrade"))).toBeUndefined();
    });
  });

  describe("insertCampaign and readCampaign", () => {
    it("stores a campaign at version 1 with who created it and when", async () => {
      const c = await insert("c1", [{ id: "n1" }, { id: "n2" }], T0 + 7);
      const row = await store.transaction((tx) => tx.readCampaign("c1", true));
      expect(row).toEqual({
        campaign: c.campaign,
        targetVersion: TARGET,
        createdBy: "tester",
        updatedAt: at(7),
        finishedAt: undefined,
        version: 1,
      });
    });

    it("reads undefined for an unknown campaign", async () => {
      expect(await store.transaction((tx) => tx.readCampaign("nope"))).toBeUndefined();
    });

    it("refuses a second campaign with the same id and keeps the first", async () => {
      await insert("c1", [{ id: "n1" }]);
      await expect(insert("c1", [{ id: "n2" }], T0 + 1)).rejects.toThrow();
      expect((await store.transaction((tx) => tx.readNodes("c1"))).map((n) => n.nodeId)).toEqual([
        "n1",
      ]);
      expect(await store.liveCampaignIds()).toEqual(["c1"]);
    });
  });

  describe("readNodes", () => {
    it("reads every node record in canary order, whatever order they were inserted in", async () => {
      const ids = Array.from({ length: 12 }, (_, i) => `node-${i}`);
      const c = await insert(
        "c1",
        ids.map((id) => ({ id })),
      );
      const expected = [...c.nodes].sort((a, b) => a.order - b.order);
      // The plan's canary order is not the ids' order, nor the reversed insertion order.
      expect(expected.map((n) => n.nodeId)).not.toEqual([...ids].sort());
      const nodes = await store.transaction((tx) => tx.readNodes("c1"));
      expect(nodes).toEqual(expected);
      expect(nodes.map((n) => n.order)).toEqual(ids.map((_, i) => i));
    });

    it("reads no nodes for an unknown campaign", async () => {
      expect(await store.transaction((tx) => tx.readNodes("nope"))).toEqual([]);
    });
  });

  describe("writeDecision", () => {
    it("writes the campaign, changed nodes, outbox rows, applied commands and audits, and bumps the version", async () => {
      const c = await insert("c1", [{ id: "n1" }, { id: "n2" }]);
      const cmd = await fx.addCommand("c1", "pause", false);
      const n1 = c.nodes.find((n) => n.nodeId === "n1") as CampaignNode;
      const offered: CampaignNode = {
        ...n1,
        state: "offered",
        upgradeOperationId: operationId("c1", "n1", "upgrade"),
        offeredAt: T0 + 5,
        offerBootId: "b1",
        previousVersion: "1.0.0",
      };
      const wrote = await store.transaction(async (tx) => {
        const row = await tx.readCampaign("c1", true);
        expect(row?.version).toBe(1);
        return tx.writeDecision({
          campaignId: "c1",
          version: 1,
          campaign: { ...c.campaign, phase: "paused", pausedAt: T0 + 5 },
          nodes: [offered],
          operations: [op("c1", "n1", "upgrade")],
          appliedCommands: [{ id: cmd, outcome: "applied" }],
          audits: [
            {
              actor: "operator",
              actorIp: "10.0.0.1",
              action: "campaign.paused",
              campaignId: "c1",
              message: "paused by the operator",
              detail: { reason: "pause please" },
            },
          ],
          now: at(5),
        });
      });
      expect(wrote).toBe(true);
      const row = await store.transaction((tx) => tx.readCampaign("c1"));
      expect(row?.version).toBe(2);
      expect(row?.updatedAt).toEqual(at(5));
      expect(row?.campaign).toEqual({ ...c.campaign, phase: "paused", pausedAt: T0 + 5 });
      const nodes = await store.transaction((tx) => tx.readNodes("c1"));
      expect(nodes.find((n) => n.nodeId === "n1")).toEqual(offered);
      expect(nodes.find((n) => n.nodeId === "n2")?.state).toBe("waiting");
      expect(await unacked()).toEqual([
        {
          nodeId: "n1",
          id: "c1/n1/upgrade",
          payload: "payload of c1/n1/upgrade",
        },
      ]);
      expect(await store.transaction((tx) => tx.pendingCommands("c1"))).toEqual([]);
      expect(await fx.command(cmd)).toEqual({ applied_at: at(5), outcome: "applied" });
      expect(await fx.audits("c1")).toEqual([
        {
          action: "campaign.paused",
          actor: "operator",
          message: "paused by the operator",
          time: at(5),
        },
      ]);
    });

    it("bumps the version when only a command was applied, and sets finishedAt from a finished campaign", async () => {
      const c = await insert("c1", [{ id: "n1" }]);
      const cmd = await fx.addCommand("c1", "resume", false);
      await store.transaction((tx) =>
        tx.writeDecision({
          campaignId: "c1",
          version: 1,
          campaign: undefined,
          nodes: [],
          operations: [],
          appliedCommands: [{ id: cmd, outcome: "ignored: not paused" }],
          audits: [],
          now: at(3),
        }),
      );
      expect(await versionOf("c1")).toBe(2);
      expect(await fx.command(cmd)).toEqual({ applied_at: at(3), outcome: "ignored: not paused" });
      await store.transaction((tx) =>
        tx.writeDecision({
          campaignId: "c1",
          version: 2,
          campaign: { ...c.campaign, phase: "completed", finishedAt: T0 + 9 },
          nodes: [],
          operations: [],
          appliedCommands: [],
          audits: [],
          now: at(9),
        }),
      );
      const row = await store.transaction((tx) => tx.readCampaign("c1"));
      expect(row?.version).toBe(3);
      expect(row?.finishedAt).toEqual(at(9));
    });

    it("throws CampaignVersionConflict on a stale version, and its transaction writes nothing", async () => {
      const c = await insert("c1", [{ id: "n1" }]);
      const cmd = await fx.addCommand("c1", "pause", false);
      await addOperations("c1", [op("c1", "n1", "confirm")], at(1));
      expect(await versionOf("c1")).toBe(2);
      const stale = store.transaction((tx) =>
        tx.writeDecision({
          campaignId: "c1",
          version: 1,
          campaign: { ...c.campaign, phase: "paused", pausedAt: T0 + 2 },
          nodes: [{ ...(c.nodes[0] as CampaignNode), state: "offered" }],
          operations: [op("c1", "n1", "upgrade")],
          appliedCommands: [{ id: cmd, outcome: "applied" }],
          audits: [],
          now: at(2),
        }),
      );
      await expect(stale).rejects.toBeInstanceOf(CampaignVersionConflict);
      const row = await store.transaction((tx) => tx.readCampaign("c1"));
      expect(row?.version).toBe(2);
      expect(row?.campaign.phase).toBe("running");
      expect((await store.transaction((tx) => tx.readNodes("c1")))[0]?.state).toBe("waiting");
      expect(await fx.operation("c1/n1/upgrade")).toBeUndefined();
      expect((await store.transaction((tx) => tx.pendingCommands("c1"))).map((r) => r.id)).toEqual([
        cmd,
      ]);
    });

    it("throws CampaignVersionConflict for a campaign that does not exist", async () => {
      await expect(
        addOperations("ghost", [op("ghost", "n1", "confirm")], at(1)),
      ).rejects.toBeInstanceOf(CampaignVersionConflict);
    });

    it("inserts outbox rows insert-or-ignore: a row already there keeps its payload and time", async () => {
      await insert("c1", [{ id: "n1", state: "offered" }]);
      await addOperations("c1", [op("c1", "n1", "upgrade")], at(1));
      const again = await addOperations(
        "c1",
        [op("c1", "n1", "upgrade", { payload: new TextEncoder().encode("second payload") })],
        at(2),
      );
      expect(again).toBe(true);
      expect(await versionOf("c1")).toBe(3);
      expect(await unacked()).toEqual([
        { nodeId: "n1", id: "c1/n1/upgrade", payload: "payload of c1/n1/upgrade" },
      ]);
    });

    it("records an undeliverable outbox row as a send failure at the decision's time", async () => {
      await insert("c1", [{ id: "n1", state: "offered" }]);
      await addOperations(
        "c1",
        [op("c1", "n1", "upgrade", { payload: null, failure: "no artifact for the platform" })],
        at(4),
      );
      expect(await store.transaction((tx) => tx.readOperationFacts("c1"))).toEqual([
        {
          id: "c1/n1/upgrade",
          node_id: "n1",
          report_phase: null,
          report_code: null,
          report_message: null,
          report_version: null,
          report_at: null,
          report_boot_id: null,
          failed_at: at(4),
          failure: "no artifact for the platform",
        },
      ]);
      expect(await unacked()).toEqual([]);
    });

    it("returns false and writes nothing when nothing changed, audits included, whatever the version", async () => {
      await insert("c1", [{ id: "n1" }]);
      for (const version of [1, 99]) {
        const wrote = await store.transaction((tx) =>
          tx.writeDecision({
            campaignId: "c1",
            version,
            campaign: undefined,
            nodes: [],
            operations: [],
            appliedCommands: [],
            audits: [
              {
                actor: "campaign-worker",
                actorIp: "",
                action: "campaign.noop",
                campaignId: "c1",
                message: "nothing",
              },
            ],
            now: at(5),
          }),
        );
        expect(wrote).toBe(false);
      }
      const row = await store.transaction((tx) => tx.readCampaign("c1"));
      expect(row?.version).toBe(1);
      expect(row?.updatedAt).toEqual(at(0));
      expect(await fx.audits("c1")).toEqual([]);
    });

    it("changes only the named nodes of the named campaign", async () => {
      const a = await insert("a", [{ id: "n1" }, { id: "n2" }]);
      await insert("b", [{ id: "n1" }]);
      const n1 = a.nodes.find((n) => n.nodeId === "n1") as CampaignNode;
      await store.transaction((tx) =>
        tx.writeDecision({
          campaignId: "a",
          version: 1,
          campaign: undefined,
          nodes: [
            { ...n1, state: "applying" },
            { ...n1, nodeId: "stranger", state: "applying" },
          ],
          operations: [],
          appliedCommands: [],
          audits: [],
          now: at(1),
        }),
      );
      const nodesOf = async (id: string) =>
        (await store.transaction((tx) => tx.readNodes(id))).map((n) => `${n.nodeId}:${n.state}`);
      expect((await nodesOf("a")).sort()).toEqual(["n1:applying", "n2:waiting"]);
      expect(await nodesOf("b")).toEqual(["n1:waiting"]);
      expect(await store.openNodeIds("b")).toEqual(["n1"]);
    });
  });

  describe("readRegistry", () => {
    const n1: RegistryInput = {
      id: "n1",
      pool: "p",
      boot_id: "b1",
      agent_version: "1.0.0",
      capabilities: ["upgrade.v1", "config.v1"],
      platform: "linux-amd64",
      enabled: true,
      last_seen: at(-30_000),
      online: true,
      held_by: "control-a",
    };
    const n2: RegistryInput = {
      ...n1,
      id: "n2",
      boot_id: "b2",
      agent_version: "1.1.0",
      capabilities: [],
      platform: "linux-arm64",
      enabled: false,
      last_seen: null,
      online: false,
      held_by: null,
    };

    it("reads the rows of known ids with enabled, last_seen, online and held_by, leaving unknown ids out and each id once", async () => {
      await fx.putNode(n1);
      await fx.putNode(n2);
      const rows = await store.transaction((tx) => tx.readRegistry(["n2", "ghost", "n1", "n2"]));
      const { pool: _p1, ...row1 } = n1;
      const { pool: _p2, ...row2 } = n2;
      expect([...rows].sort((a, b) => a.id.localeCompare(b.id))).toEqual([row1, row2]);
    });

    it("reads nothing for no ids", async () => {
      await fx.putNode(n1);
      expect(await store.transaction((tx) => tx.readRegistry([]))).toEqual([]);
    });
  });

  describe("recordFacts, readOperationFacts and readConfigFailures", () => {
    const report = (id: string, nodeId: string, phase: string, ms: number) => ({
      id,
      nodeId,
      phase,
      code: `${phase.toLowerCase()}_code`,
      message: `${phase} message`,
      version: "2.0.0",
      at: at(ms),
      bootId: `${nodeId}-boot-${ms}`,
    });
    const factsOf = async (campaignId: string, nodeIds?: readonly string[]) =>
      (await store.transaction((tx) => tx.readOperationFacts(campaignId, nodeIds)))
        .map((f) => ({ id: f.id, phase: f.report_phase, at: f.report_at, failed: f.failed_at }))
        .sort((a, b) => a.id.localeCompare(b.id));

    beforeEach(async () => {
      await insert("c1", [
        { id: "n1", state: "offered" },
        { id: "n2", state: "offered" },
        { id: "n3", state: "offered" },
      ]);
      await addOperations(
        "c1",
        [op("c1", "n1", "upgrade"), op("c1", "n2", "upgrade"), op("c1", "n3", "upgrade")],
        at(1),
      );
    });

    it("writes a report onto its outbox row only when id AND node match", async () => {
      await store.recordFacts([report("c1/n1/upgrade", "n2", "APPLYING", 10)], []);
      expect(await factsOf("c1")).toEqual([]);
      expect(await fx.operation("c1/n1/upgrade")).toMatchObject({ acked_at: null });
      expect(await unackedIds()).toEqual(["c1/n1/upgrade", "c1/n2/upgrade", "c1/n3/upgrade"]);

      await store.recordFacts([report("c1/n1/upgrade", "n1", "APPLYING", 10)], []);
      const facts = await store.transaction((tx) => tx.readOperationFacts("c1"));
      expect(facts).toEqual([
        {
          id: "c1/n1/upgrade",
          node_id: "n1",
          report_phase: "APPLYING",
          report_code: "applying_code",
          report_message: "APPLYING message",
          report_version: "2.0.0",
          report_at: at(10),
          report_boot_id: "n1-boot-10",
          failed_at: null,
          failure: null,
        },
      ]);
      expect(await unackedIds()).toEqual(["c1/n2/upgrade", "c1/n3/upgrade"]);
    });

    it("ignores a report older than the stored one, and sets acked_at from the first report only", async () => {
      await store.recordFacts([report("c1/n1/upgrade", "n1", "ACCEPTED", 10)], []);
      expect(await fx.operation("c1/n1/upgrade")).toMatchObject({ acked_at: at(10) });
      await store.recordFacts([report("c1/n1/upgrade", "n1", "APPLYING", 20)], []);
      await store.recordFacts([report("c1/n1/upgrade", "n1", "DOWNLOADING", 15)], []);
      expect(await factsOf("c1")).toEqual([
        { id: "c1/n1/upgrade", phase: "APPLYING", at: at(20), failed: null },
      ]);
      expect(await fx.operation("c1/n1/upgrade")).toMatchObject({ acked_at: at(10) });
    });

    it("changes nothing for reports on unknown operations", async () => {
      await store.recordFacts(
        [
          report("c1/n9/upgrade", "n9", "APPLYING", 10),
          report("ghost/n1/upgrade", "n1", "APPLYING", 10),
        ],
        [],
      );
      expect(await factsOf("c1")).toEqual([]);
      expect(await unackedIds()).toHaveLength(3);
    });

    it("reads the facts of reported and failed rows only, of the named nodes when given", async () => {
      await insert("c2", [{ id: "n1", state: "offered" }], T0 + 1);
      await addOperations("c2", [op("c2", "n1", "upgrade")], at(2));
      await addOperations(
        "c1",
        [op("c1", "n2", "rollback", { payload: null, failure: "cannot build" })],
        at(3),
      );
      await store.recordFacts(
        [
          report("c1/n1/upgrade", "n1", "RESTARTING", 10),
          report("c2/n1/upgrade", "n1", "FAILED", 11),
        ],
        [],
      );
      expect(await factsOf("c1")).toEqual([
        { id: "c1/n1/upgrade", phase: "RESTARTING", at: at(10), failed: null },
        { id: "c1/n2/rollback", phase: null, at: null, failed: at(3) },
      ]);
      expect(await factsOf("c1", ["n2", "n3"])).toEqual([
        { id: "c1/n2/rollback", phase: null, at: null, failed: at(3) },
      ]);
      expect(await factsOf("c1", [])).toEqual([]);
      expect(await factsOf("c2")).toEqual([
        { id: "c2/n1/upgrade", phase: "FAILED", at: at(11), failed: null },
      ]);
    });

    it("records config failures of existing campaigns only, read oldest first and by node", async () => {
      await insert("done", [{ id: "n1", state: "succeeded" }], T0 + 1);
      await store.recordFacts(
        [],
        [
          { campaignId: "c1", nodeId: "n2", at: at(5), bootId: "b2", message: "bad config" },
          { campaignId: "ghost", nodeId: "n1", at: at(6), bootId: "b1", message: "lost" },
          { campaignId: "done", nodeId: "n1", at: at(6), bootId: null, message: "late" },
        ],
      );
      // One call each: the SQL adapter numbers the rows of one call in no particular order.
      await store.recordFacts(
        [],
        [{ campaignId: "c1", nodeId: "n1", at: at(7), bootId: null, message: "worse config" }],
      );
      await store.recordFacts(
        [],
        [{ campaignId: "c1", nodeId: "n2", at: at(8), bootId: "b2", message: "still bad" }],
      );
      expect(await store.transaction((tx) => tx.readConfigFailures("c1"))).toEqual([
        { node_id: "n2", at: at(5), boot_id: "b2", message: "bad config" },
        { node_id: "n1", at: at(7), boot_id: null, message: "worse config" },
        { node_id: "n2", at: at(8), boot_id: "b2", message: "still bad" },
      ]);
      expect(await store.transaction((tx) => tx.readConfigFailures("c1", ["n2"]))).toEqual([
        { node_id: "n2", at: at(5), boot_id: "b2", message: "bad config" },
        { node_id: "n2", at: at(8), boot_id: "b2", message: "still bad" },
      ]);
      expect(await store.transaction((tx) => tx.readConfigFailures("c1", []))).toEqual([]);
      expect(await store.transaction((tx) => tx.readConfigFailures("done"))).toEqual([
        { node_id: "n1", at: at(6), boot_id: null, message: "late" },
      ]);
      expect(await store.transaction((tx) => tx.readConfigFailures("ghost"))).toEqual([]);
    });
  });

  describe("recordGateResult and readGateResults", () => {
    const result = (
      gate: number,
      status: "pass" | "fail" | "unreachable",
      t: number,
      extra: { batch?: number; keep?: number } = {},
    ) =>
      store.recordGateResult({
        campaignId: "c1",
        batch: extra.batch ?? 0,
        gate,
        status,
        at: at(t),
        value: `v${t}`,
        message: `${status} at ${t}`,
        keepFailuresAfter: extra.keep,
      });
    const read = (batch = 0, id = "c1") => store.transaction((tx) => tx.readGateResults(id, batch));

    it("keeps the latest result per batch and gate, read by gate, and drops results of unknown campaigns", async () => {
      await insert("c1", [{ id: "n1" }]);
      await result(1, "pass", 1);
      await result(0, "pass", 2);
      await result(0, "pass", 3);
      await result(0, "fail", 4, { batch: 1 });
      await store.recordGateResult({
        campaignId: "ghost",
        batch: 0,
        gate: 0,
        status: "fail",
        at: at(5),
        value: "x",
        message: "x",
      });
      expect(await read()).toEqual([
        {
          batch: 0,
          gate: 0,
          status: "pass",
          at: at(3).getTime(),
          value: "v3",
          message: "pass at 3",
          unreachableSince: undefined,
        },
        {
          batch: 0,
          gate: 1,
          status: "pass",
          at: at(1).getTime(),
          value: "v1",
          message: "pass at 1",
          unreachableSince: undefined,
        },
      ]);
      expect((await read(1)).map((r) => r.status)).toEqual(["fail"]);
      expect(await read(0, "ghost")).toEqual([]);
    });

    it("keeps a failing result newer than keepFailuresAfter, and replaces one at or before it", async () => {
      await insert("c1", [{ id: "n1" }]);
      await result(0, "fail", 2);
      await result(0, "pass", 3);
      expect((await read()).map((r) => `${r.status}@${r.value}`)).toEqual(["fail@v2"]);
      await result(0, "pass", 4, { keep: at(2).getTime() });
      expect((await read()).map((r) => `${r.status}@${r.value}`)).toEqual(["pass@v4"]);
    });

    it("counts an unreachable streak from its first result, and ends it with a reachable one", async () => {
      await insert("c1", [{ id: "n1" }]);
      await result(0, "unreachable", 2);
      await result(0, "unreachable", 5);
      expect(await read()).toMatchObject([
        { status: "unreachable", at: at(5).getTime(), unreachableSince: at(2).getTime() },
      ]);
      await result(0, "pass", 6);
      await result(0, "unreachable", 7);
      expect(await read()).toMatchObject([
        { status: "unreachable", unreachableSince: at(7).getTime() },
      ]);
    });
  });

  describe("pendingCommands", () => {
    it("reads a campaign's commands not applied yet, oldest first", async () => {
      await insert("c1", [{ id: "n1" }]);
      await insert("c2", [{ id: "n2" }], T0 + 1);
      const pause = await fx.addCommand("c1", "pause", false);
      await fx.addCommand("c2", "pause", false);
      const abort = await fx.addCommand("c1", "abort", true);
      const resume = await fx.addCommand("c1", "resume", false);
      const unknown = await fx.addCommand("c1", "dance", false);
      await store.transaction((tx) =>
        tx.writeDecision({
          campaignId: "c1",
          version: 1,
          campaign: undefined,
          nodes: [],
          operations: [],
          appliedCommands: [{ id: abort, outcome: "applied" }],
          audits: [],
          now: at(1),
        }),
      );
      const row = (id: string, kind: string, rollback: boolean) => ({
        id,
        kind,
        rollback,
        reason: `${kind} please`,
        actor: "operator",
        actor_ip: "10.0.0.1",
      });
      expect(await store.transaction((tx) => tx.pendingCommands("c1"))).toEqual([
        row(pause, "pause", false),
        row(resume, "resume", false),
        row(unknown, "dance", false),
      ]);
      expect(await store.transaction((tx) => tx.pendingCommands("nope"))).toEqual([]);
    });
  });

  describe("unackedOperations and markSent", () => {
    it("re-sends a confirm and a rollback whatever the node's state, an upgrade only while offered/applying/restarting", async () => {
      const nodes = NODE_STATES.map((state) => ({ id: `n-${state}`, state }));
      await insert("c1", nodes);
      await addOperations(
        "c1",
        nodes.flatMap((n) => [
          op("c1", n.id, "upgrade"),
          op("c1", n.id, "rollback"),
          op("c1", n.id, "confirm"),
        ]),
        at(1),
      );
      const sent = (await unacked()).map((o) => `${o.id.split("/")[2]}@${o.nodeId.slice(2)}`);
      expect(sent.sort()).toEqual(
        [
          ...NODE_STATES.map((s) => `confirm@${s}`),
          "upgrade@offered",
          "upgrade@applying",
          "upgrade@restarting",
          ...NODE_STATES.map((s) => `rollback@${s}`),
        ].sort(),
      );
    });

    it("stops re-sending a rollback once its node belongs to a campaign created later", async () => {
      await insert("c1", [
        { id: "n1", state: "failed" },
        { id: "n2", state: "timed_out" },
      ]);
      await addOperations("c1", [op("c1", "n1", "rollback"), op("c1", "n2", "rollback")], at(1));
      await insert("c2", [{ id: "n1" }], T0 + 5);
      expect(await unackedIds({})).toEqual(["c1/n2/rollback"]);
    });

    it("lists them oldest first, ties by id, with their payloads", async () => {
      await insert("c1", [{ id: "a" }, { id: "b" }, { id: "c" }]);
      await addOperations("c1", [op("c1", "c", "confirm"), op("c1", "b", "confirm")], at(2));
      await addOperations("c1", [op("c1", "a", "confirm")], at(3));
      await insert("c0", [{ id: "z" }], T0 + 1);
      await addOperations("c0", [op("c0", "z", "confirm")], at(1));
      expect(await unacked()).toEqual([
        { nodeId: "z", id: "c0/z/confirm", payload: "payload of c0/z/confirm" },
        { nodeId: "b", id: "c1/b/confirm", payload: "payload of c1/b/confirm" },
        { nodeId: "c", id: "c1/c/confirm", payload: "payload of c1/c/confirm" },
        { nodeId: "a", id: "c1/a/confirm", payload: "payload of c1/a/confirm" },
      ]);
    });

    it("filters by node and by last send", async () => {
      await insert("c1", [
        { id: "n1", state: "offered" },
        { id: "n2", state: "offered" },
        { id: "n3", state: "offered" },
      ]);
      await addOperations(
        "c1",
        [op("c1", "n1", "upgrade"), op("c1", "n2", "upgrade"), op("c1", "n3", "upgrade")],
        at(1),
      );
      await store.markSent(["c1/n1/upgrade"], at(10));
      await store.markSent(["c1/n2/upgrade"], at(20));
      expect(await unackedIds({ nodeIds: ["n2", "ghost"] })).toEqual(["c1/n2/upgrade"]);
      expect(await unackedIds({ nodeIds: [] })).toEqual([]);
      expect(await unackedIds({ sentBefore: at(20) })).toEqual(["c1/n1/upgrade", "c1/n3/upgrade"]);
      expect(await unackedIds({ sentBefore: at(10) })).toEqual(["c1/n3/upgrade"]);
      expect(await unackedIds({ sentBefore: at(21) })).toEqual([
        "c1/n1/upgrade",
        "c1/n2/upgrade",
        "c1/n3/upgrade",
      ]);
      expect(await unackedIds({ nodeIds: ["n1", "n2"], sentBefore: at(20) })).toEqual([
        "c1/n1/upgrade",
      ]);
    });

    it("never re-sends an acknowledged, failed or payload-less row", async () => {
      await insert("c1", [{ id: "n1" }, { id: "n2" }, { id: "n3" }, { id: "n4" }]);
      await addOperations(
        "c1",
        [
          op("c1", "n1", "confirm"),
          op("c1", "n2", "confirm", { payload: null, failure: "cannot build" }),
          op("c1", "n3", "confirm", { payload: null }),
          op("c1", "n4", "confirm"),
        ],
        at(1),
      );
      await store.recordFacts(
        [
          {
            id: "c1/n1/confirm",
            nodeId: "n1",
            phase: "CONFIRMED",
            code: "",
            message: "",
            version: TARGET,
            at: at(5),
            bootId: null,
          },
        ],
        [],
      );
      expect(await unackedIds()).toEqual(["c1/n4/confirm"]);
    });

    it("markSent stamps the last send and counts sends, ignoring unknown ids", async () => {
      await insert("c1", [{ id: "n1" }, { id: "n2" }]);
      await addOperations("c1", [op("c1", "n1", "confirm"), op("c1", "n2", "confirm")], at(1));
      await store.markSent(["c1/n1/confirm", "ghost"], at(10));
      await store.markSent(["c1/n1/confirm"], at(20));
      await store.markSent([], at(30));
      expect(await fx.operation("c1/n1/confirm")).toEqual({
        acked_at: null,
        last_sent_at: at(20),
        send_count: 2,
      });
      expect(await fx.operation("c1/n2/confirm")).toEqual({
        acked_at: null,
        last_sent_at: null,
        send_count: 0,
      });
      expect(await fx.operation("ghost")).toBeUndefined();
    });
  });

  describe("liveCampaignIds and openNodeIds", () => {
    it("lists the campaigns not finished, oldest first, ties by id", async () => {
      await insert("b", [{ id: "n1" }], T0 + 1);
      await insert("a", [{ id: "n1" }], T0 + 2);
      const d = await insert("d", [{ id: "n1" }], T0);
      await insert("c", [{ id: "n1" }], T0 + 1);
      await store.transaction((tx) =>
        tx.writeDecision({
          campaignId: "d",
          version: 1,
          campaign: { ...d.campaign, phase: "completed", finishedAt: T0 + 3 },
          nodes: [],
          operations: [],
          appliedCommands: [],
          audits: [],
          now: at(3),
        }),
      );
      expect(await store.liveCampaignIds()).toEqual(["b", "c", "a"]);
    });

    it("lists the nodes of a campaign not in a final state", async () => {
      await insert(
        "c1",
        NODE_STATES.map((state) => ({ id: `n-${state}`, state })),
      );
      expect((await store.openNodeIds("c1")).sort()).toEqual([
        "n-applying",
        "n-offered",
        "n-restarting",
        "n-rolling_back",
        "n-verifying",
        "n-waiting",
      ]);
      expect(await store.openNodeIds("nope")).toEqual([]);
    });
  });

  describe("liveCampaignOfNodes", () => {
    it("names the newest unfinished campaign of each node, leaving out nodes in none", async () => {
      await insert("old", [{ id: "n1" }, { id: "n2" }], T0);
      await insert("new", [{ id: "n2" }, { id: "n3", state: "succeeded" }], T0 + 1);
      const done = await insert("done", [{ id: "n4" }, { id: "n1" }], T0 + 2);
      await store.transaction((tx) =>
        tx.writeDecision({
          campaignId: "done",
          version: 1,
          campaign: { ...done.campaign, phase: "completed", finishedAt: T0 + 3 },
          nodes: [],
          operations: [],
          appliedCommands: [],
          audits: [],
          now: at(3),
        }),
      );
      const found = await store.liveCampaignOfNodes(["n1", "n2", "n3", "n4", "ghost", "n1"]);
      expect([...found].sort()).toEqual([
        ["n1", "old"],
        ["n2", "new"],
        ["n3", "new"],
      ]);
      expect(await store.liveCampaignOfNodes([])).toEqual(new Map());
    });
  });

  describe("notify and listen", () => {
    type Heard = { channel: string; lines: readonly string[] };
    const stops: (() => Promise<void>)[] = [];
    afterEach(async () => {
      for (const stop of stops.splice(0)) await stop();
    });
    const until = async (done: () => boolean, what: string) => {
      for (let i = 0; i < 500 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
      if (!done()) throw new Error(`timed out waiting for ${what}`);
    };
    /** Listens on `channels`; resolves once the listener is established (its first gap). */
    const listener = async (channels: readonly string[]) => {
      const heard: Heard[] = [];
      let gaps = 0;
      stops.push(
        store.listen(channels, {
          onNotify: (channel, lines) => heard.push({ channel, lines }),
          onGap: () => {
            gaps += 1;
          },
        }),
      );
      await until(() => gaps > 0, "the listener");
      return { heard, gaps: () => gaps };
    };

    it("delivers each notification's lines, in order, to every listener of its channel only, the sender's included", async () => {
      const both = await listener(["contract_a", "contract_b"]);
      const onlyA = await listener(["contract_a"]);
      await store.notify("contract_a", ["n1", "n2"]);
      await store.notify("contract_b", ["c1/n3"]);
      await store.notify("contract_c", ["nobody"]);
      await store.notify("contract_a", []);
      await until(() => both.heard.length >= 2 && onlyA.heard.length >= 1, "notifications");
      expect(both.heard).toEqual([
        { channel: "contract_a", lines: ["n1", "n2"] },
        { channel: "contract_b", lines: ["c1/n3"] },
      ]);
      expect(onlyA.heard).toEqual([{ channel: "contract_a", lines: ["n1", "n2"] }]);
      expect(both.gaps()).toBe(1);
    });

    it("packs many lines into payloads under PostgreSQL's 8000-byte limit and loses none", async () => {
      const l = await listener(["contract_many"]);
      const lines = Array.from({ length: 2000 }, (_, i) => `campaign-${i}/node-${"x".repeat(30)}`);
      await store.notify("contract_many", lines);
      await until(() => l.heard.flatMap((h) => h.lines).length >= lines.length, "every line");
      expect(l.heard.length).toBeGreaterThan(1);
      expect(l.heard.flatMap((h) => h.lines)).toEqual(lines);
    });

    it("delivers nothing more once the listener stopped", async () => {
      const l = await listener(["contract_stop"]);
      const stop = stops.pop() as () => Promise<void>;
      await stop();
      await store.notify("contract_stop", ["late"]);
      const other = await listener(["contract_stop"]);
      await store.notify("contract_stop", ["later"]);
      await until(() => other.heard.length >= 1, "the other listener");
      expect(l.heard).toEqual([]);
    });
  });

  describe("poolLoads", () => {
    const NOW = T0 + 100_000;
    const registryRow = (id: string, pool: string, enabled = true): RegistryInput => ({
      id,
      pool,
      boot_id: "b",
      agent_version: "1.0.0",
      capabilities: ["upgrade.v1"],
      platform: "linux-amd64",
      enabled,
      last_seen: null,
    });

    beforeEach(async () => {
      for (const id of ["a1", "a2", "a3"]) await fx.putNode(registryRow(id, "p1"));
      await fx.putNode(registryRow("a4", "p1", false));
      for (const id of ["b1", "b2"]) await fx.putNode(registryRow(id, "p2"));
      for (const id of ["z1", "z2", "z3"]) await fx.putNode(registryRow(id, "p9"));
      await insert("mine", [
        { id: "m1", pool: "p1", state: "offered" },
        { id: "m2", pool: "p1", state: "applying" },
        { id: "m3", pool: "p2", state: "waiting" },
      ]);
      await insert(
        "other",
        [
          { id: "o-offered", pool: "p1", state: "offered" },
          { id: "o-applying", pool: "p1", state: "applying" },
          { id: "o-restarting", pool: "p1", state: "restarting" },
          { id: "o-verifying-grace", pool: "p1", state: "verifying", graceEndsAt: NOW + 1 },
          { id: "o-verifying-open", pool: "p1", state: "verifying" },
          { id: "o-verifying-ended", pool: "p1", state: "verifying", graceEndsAt: NOW },
          { id: "o-verifying-past", pool: "p1", state: "verifying", graceEndsAt: NOW - 5 },
          { id: "o-waiting", pool: "p1", state: "waiting" },
          { id: "o-rolling-back", pool: "p1", state: "rolling_back" },
          { id: "o-succeeded", pool: "p1", state: "succeeded" },
          { id: "o-failed", pool: "p1", state: "failed" },
          { id: "o-p2", pool: "p2", state: "restarting" },
          { id: "o-p9", pool: "p9", state: "offered" },
        ],
        T0 + 1,
      );
      const done = await insert(
        "done",
        [
          { id: "d1", pool: "p1", state: "applying" },
          { id: "d2", pool: "p2", state: "offered" },
        ],
        T0 + 2,
      );
      await store.transaction((tx) =>
        tx.writeDecision({
          campaignId: "done",
          version: 1,
          campaign: { ...done.campaign, phase: "aborted", finishedAt: T0 + 3 },
          nodes: [],
          operations: [],
          appliedCommands: [],
          audits: [],
          now: at(3),
        }),
      );
    });

    const loads = async (pools: readonly string[], excluding: string) =>
      Object.fromEntries(
        await store.transaction((tx) => tx.poolLoads(pools, excluding, NOW)),
      ) as Record<string, unknown>;

    it("sizes a pool by its enabled nodes in the registry, for the asked pools only", async () => {
      const got = await loads(["p1", "p2", "p3"], "mine");
      expect(Object.keys(got).sort()).toEqual(["p1", "p2", "p3"]);
      expect(got.p1).toMatchObject({ size: 3 });
      expect(got.p2).toMatchObject({ size: 2 });
      expect(got.p3).toEqual({ size: 0, inFlightElsewhere: 0 });
    });

    it("counts in flight elsewhere: offered, applying, restarting, and verifying within grace, of other unfinished campaigns only", async () => {
      expect(await loads(["p1", "p2", "p3"], "mine")).toEqual({
        p1: { size: 3, inFlightElsewhere: 5 },
        p2: { size: 2, inFlightElsewhere: 1 },
        p3: { size: 0, inFlightElsewhere: 0 },
      });
      expect(await loads(["p1", "p2"], "other")).toEqual({
        p1: { size: 3, inFlightElsewhere: 2 },
        p2: { size: 2, inFlightElsewhere: 0 },
      });
    });

    it("answers an empty map for no pools", async () => {
      expect((await store.transaction((tx) => tx.poolLoads([], "mine", NOW))).size).toBe(0);
    });
  });

  describe("offerRelease", () => {
    it("reads a registered release with its envelope, and undefined for an unknown version", async () => {
      const made = await makeRelease({
        version: TARGET,
        sequence: 7,
        keys: await makeKeys(1),
        platforms: ["linux-amd64"],
      });
      const artifacts = [{ platform: "linux-amd64", sha256: "ab".repeat(32), size: 42, url: "" }];
      await fx.putRelease({
        version: TARGET,
        sequence: 7,
        envelope: made.envelope,
        artifacts,
      });
      expect(await store.offerRelease(TARGET)).toEqual({
        version: TARGET,
        sequence: 7,
        envelope: parseEnvelope(made.envelope),
        artifacts,
      });
      expect(await store.offerRelease("9.9.9")).toBeUndefined();
    });
  });

  describe("the leader lease", () => {
    const holds = (holder: string, epoch: number, name = "campaign-worker") =>
      store.transaction((tx) => tx.holdsLease(name, holder, epoch));

    it("is acquired at epoch 1 by the first tick and renewed by the next", async () => {
      const a = lease("A");
      expect(a.epoch).toBeUndefined();
      expect(await holds("A", 1)).toBe(false);
      expect(await a.tick()).toBe(true);
      expect(a.epoch).toBe(1);
      expect(await a.tick()).toBe(true);
      expect(a.epoch).toBe(1);
      await store.transaction((tx) => a.fence(tx));
    });

    it("cannot be taken by a second holder while the first holds it live", async () => {
      const a = lease("A");
      const b = lease("B");
      await a.tick();
      expect(await b.tick()).toBe(false);
      expect(b.epoch).toBeUndefined();
      await expect(store.transaction((tx) => b.fence(tx))).rejects.toBeInstanceOf(StaleLeaderError);
      expect(await a.tick()).toBe(true);
      expect(a.epoch).toBe(1);
    });

    it("holdsLease is true only for the current holder at its epoch, under the lease's name", async () => {
      const a = lease("A");
      await a.tick();
      expect(await holds("A", 1)).toBe(true);
      expect(await holds("A", 2)).toBe(false);
      expect(await holds("B", 1)).toBe(false);
      expect(await holds("A", 1, "another-lease")).toBe(false);
    });

    it("is taken over at epoch 2 once the holder's session ended; the old holder's fence throws and its next tick answers false", async () => {
      const lost: string[] = [];
      const a = lease("A", (why) => lost.push(why));
      const b = lease("B");
      await a.tick();
      await fx.endSession("A");
      expect(await b.tick()).toBe(true);
      expect(b.epoch).toBe(2);
      expect(await holds("B", 2)).toBe(true);
      expect(await holds("A", 1)).toBe(false);
      await expect(store.transaction((tx) => a.fence(tx))).rejects.toBeInstanceOf(StaleLeaderError);
      expect(a.epoch).toBeUndefined();
      expect(lost).toHaveLength(1);
      expect(await a.tick()).toBe(false);
      expect(a.epoch).toBeUndefined();
      await expect(store.transaction((tx) => a.fence(tx))).rejects.toBeInstanceOf(StaleLeaderError);
      await store.transaction((tx) => b.fence(tx));
    });

    it("ends the leadership of a holder whose session ended at its next tick, and the holder then takes it back at the next epoch", async () => {
      const lost: string[] = [];
      const a = lease("A", (why) => lost.push(why));
      await a.tick();
      await fx.endSession("A");
      expect(await a.tick()).toBe(false);
      expect(a.epoch).toBeUndefined();
      expect(lost).toHaveLength(1);
      expect(await a.tick()).toBe(true);
      expect(a.epoch).toBe(2);
    });

    it("makes a takeover wait for a transaction fenced at the old epoch, whose writes commit", async () => {
      await insert("c1", [{ id: "n1" }]);
      const a = lease("A");
      const b = lease("B");
      await a.tick();
      await fx.endSession("A");
      let taken: boolean | undefined;
      let taking: Promise<boolean> = Promise.resolve(false);
      await store.transaction(async (tx) => {
        await a.fence(tx);
        taking = b.tick().then((v) => {
          taken = v;
          return v;
        });
        await fx.untilLeaseWaits();
        expect(taken).toBeUndefined();
        const row = await tx.readCampaign("c1", true);
        await tx.writeDecision({
          campaignId: "c1",
          version: row?.version ?? 0,
          campaign: undefined,
          nodes: [],
          operations: [op("c1", "n1", "confirm")],
          appliedCommands: [],
          audits: [],
          now: at(1),
        });
      });
      expect(await taking).toBe(true);
      expect(b.epoch).toBe(2);
      expect(await versionOf("c1")).toBe(2);
      expect(await unackedIds()).toEqual(["c1/n1/confirm"]);
    });

    it("release() lets another holder take it at once and is idempotent", async () => {
      const a = lease("A");
      const b = lease("B");
      await a.tick();
      await a.release();
      expect(a.epoch).toBeUndefined();
      await a.release();
      expect(await b.tick()).toBe(true);
      expect(b.epoch).toBe(2);
      await expect(store.transaction((tx) => a.fence(tx))).rejects.toBeInstanceOf(StaleLeaderError);
      expect(await a.tick()).toBe(false);
      expect(await holds("B", 2)).toBe(true);
    });
  });
});
