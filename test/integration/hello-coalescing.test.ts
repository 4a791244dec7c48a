import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Database, openDatabase } from "../../control/db/database.js";
import { type NodeHello, NodeStore } from "../../control/db/node-store.js";
import { createLogger } from "../../control/log.js";
import { countingPool } from "../helpers/counting-pool.js";
import { createTestDatabase, type TestDatabase } from "../helpers/database.js";

/** The one-row Hello write that batching replaced: the reference for what a row must be. */
const SINGLE_ROW_HELLO = `
  update nodes set labels = $2, pool = $3, platform = $4, agent_version = $5,
      previous_version = $6, boot_id = $7, capabilities = $8,
      confirmed_sequence = greatest(confirmed_sequence, $9), first_seen = coalesce(first_seen, $10),
      last_seen = $10, online = true, session_id = $11, version = version + 1, updated_at = $10
  where id = $1`;

/**
 * Creates node rows `<prefix>-<i>` for i below `count` in varied states (token, sequence,
 * first sighting), the same for every prefix, in one transaction (one `now()`).
 */
async function seedNodes(pool: pg.Pool, prefixes: string[], count: number): Promise<void> {
  await pool.query(
    `insert into nodes (id, token_hash, confirmed_sequence, first_seen, version, enabled)
     select prefix || '-' || i, 'hash-' || i, (i * 7) % 50,
            case when i % 3 = 0 then null else timestamptz '2024-01-01' + i * interval '1 minute' end,
            1 + i % 5, i % 11 <> 0
     from unnest($1::text[]) as prefix, generate_series(0, $2 - 1) as i`,
    [prefixes, count],
  );
}

function helloOf(nodeId: string, i: number, overrides: Partial<NodeHello> = {}): NodeHello {
  return {
    nodeId,
    labels: { pool: `p${i % 4}`, zone: `z-${i}`, ...(i % 2 ? { rack: `r${i}` } : {}) },
    pool: `p${i % 4}`,
    platform: "linux-amd64",
    agentVersion: `1.${i % 9}.0`,
    previousVersion: i % 5 ? `1.${i % 7}.0` : "",
    bootId: `boot-${i}`,
    capabilities: ["observed.v1", "upgrade.v1", "rollback.v1"].slice(0, i % 4),
    confirmedSequence: (i * 13) % 60,
    ...overrides,
  };
}

const at = (seconds: number) => new Date(Date.UTC(2025, 0, 1) + seconds * 1000);

/** Every column of the nodes `<prefix>-*`, keyed by the id without its prefix. */
async function rowsOf(pool: pg.Pool, prefix: string): Promise<Map<string, unknown>> {
  const result = await pool.query("select * from nodes where id like $1 || '-%' order by id", [
    prefix,
  ]);
  return new Map(
    result.rows.map((row: { id: string; created_at: unknown }) => {
      const { id, created_at: _created, ...rest } = row;
      return [id.slice(prefix.length + 1), rest];
    }),
  );
}

describe("coalesced Hello writes and credential reads", () => {
  let testDb: TestDatabase;
  let db: Database;
  beforeAll(async () => {
    testDb = await createTestDatabase("hello_coalescing");
    db = await openDatabase({ url: testDb.url, log: createLogger({ level: "silent" }) });
  });
  afterAll(async () => {
    await db?.close();
    await testDb?.drop();
  });

  it("writes 2,000 concurrent Hellos as few statements leaving the rows one-by-one writes leave", async () => {
    await seedNodes(db.pool, ["batched", "single"], 2000);
    const counted = countingPool(db.pool);
    const store = new NodeStore(counted.pool);
    // Every tenth Hello names a node with no row: it must create nothing.
    const idOf = (prefix: string, i: number) => `${prefix}-${i % 10 === 9 ? `ghost${i}` : i}`;
    await Promise.all(
      Array.from({ length: 2000 }, (_, i) =>
        store.recordHello(helloOf(idOf("batched", i), i), `s-${i}`, at(i)),
      ),
    );
    for (let i = 0; i < 2000; i += 1) {
      const hello = helloOf(idOf("single", i), i);
      await db.pool.query(SINGLE_ROW_HELLO, [
        hello.nodeId,
        JSON.stringify(hello.labels),
        hello.pool,
        hello.platform,
        hello.agentVersion,
        hello.previousVersion,
        hello.bootId,
        JSON.stringify(hello.capabilities),
        hello.confirmedSequence,
        at(i),
        `s-${i}`,
      ]);
    }
    const batched = await rowsOf(db.pool, "batched");
    expect(batched.size).toBe(2000);
    expect(batched).toEqual(await rowsOf(db.pool, "single"));
    expect(batched.get("1")).toMatchObject({ online: true, version: 3, session_id: "s-1" });
    expect(counted.statements()).toBeLessThan(40);
  });

  it("keeps the last Hello of a node sent twice in one batch, and every caller resolves", async () => {
    await seedNodes(db.pool, ["dup", "dupref"], 3);
    const counted = countingPool(db.pool);
    const store = new NodeStore(counted.pool, { batching: { maxInFlight: 1, maxBatch: 100 } });
    // The first call executes alone; the next five wait and go as one batch, in call order.
    const calls: [string, number, number][] = [
      ["0", 1, 40], // node 0 has no first sighting yet (0 % 3 = 0)
      ["0", 2, 45],
      ["1", 3, 10],
      ["0", 4, 3], // lower sequence, later facts
      ["1", 5, 30],
      ["2", 6, 55],
    ];
    const settled = await Promise.allSettled(
      calls.map(([node, i, sequence]) =>
        store.recordHello(
          helloOf(`dup-${node}`, i, { confirmedSequence: sequence }),
          `s-${i}`,
          at(100 * i),
        ),
      ),
    );
    expect(settled.map((s) => s.status)).toEqual(calls.map(() => "fulfilled"));
    expect(counted.statements()).toBe(2);
    const reference = new NodeStore(db.pool);
    for (const [node, i, sequence] of calls) {
      await reference.recordHello(
        helloOf(`dupref-${node}`, i, { confirmedSequence: sequence }),
        `s-${i}`,
        at(100 * i),
      );
    }
    const rows = await rowsOf(db.pool, "dup");
    expect(rows).toEqual(await rowsOf(db.pool, "dupref"));
    expect(rows.get("0")).toMatchObject({
      boot_id: "boot-4",
      session_id: "s-4",
      confirmed_sequence: "45",
      first_seen: at(100),
      last_seen: at(400),
      version: 4,
    });
  });

  it("never lowers confirmed_sequence and counts every Hello when a node's Hellos race", async () => {
    await seedNodes(db.pool, ["race"], 200);
    const before = await rowsOf(db.pool, "race");
    const store = new NodeStore(db.pool);
    const sent = new Map<string, number[]>();
    await Promise.all(
      Array.from({ length: 2000 }, (_, i) => {
        const node = String((i * 37) % 200);
        const sequence = (i * 7919) % 1000;
        sent.set(node, [...(sent.get(node) ?? []), sequence]);
        return store.recordHello(
          helloOf(`race-${node}`, i, { confirmedSequence: sequence }),
          `s-${i}`,
          at(i),
        );
      }),
    );
    const after = await rowsOf(db.pool, "race");
    for (const [node, sequences] of sent) {
      const old = before.get(node) as { confirmed_sequence: string; version: number };
      expect(after.get(node)).toMatchObject({
        confirmed_sequence: String(Math.max(Number(old.confirmed_sequence), ...sequences)),
        version: old.version + sequences.length,
        online: true,
      });
    }
  });

  it("fails only the Hello PostgreSQL refuses, not the others of its batch", async () => {
    await seedNodes(db.pool, ["bad"], 8);
    const store = new NodeStore(db.pool, { batching: { maxInFlight: 1, maxBatch: 100 } });
    const settled = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) =>
        store.recordHello(
          helloOf(`bad-${i}`, i, i === 5 ? { labels: { zone: "a\u0000b" } } : {}),
          `s-${i}`,
          at(i),
        ),
      ),
    );
    expect(settled.map((s) => s.status)).toEqual([
      ...Array(5).fill("fulfilled"),
      "rejected",
      ...Array(2).fill("fulfilled"),
    ]);
    const online = await db.pool.query(
      "select id from nodes where id like 'bad-%' and online order by id",
    );
    expect(online.rows.map((r) => r.id)).toEqual([0, 1, 2, 3, 4, 6, 7].map((i) => `bad-${i}`));
  });

  it("never deadlocks when Hello batches and liveness flushes share nodes in other orders", async () => {
    const count = 1000;
    await seedNodes(db.pool, ["lock"], count);
    const store = new NodeStore(db.pool);
    /** Node ids in the order i -> (i * step) mod count: a different order per step. */
    const order = (step: number) =>
      Array.from({ length: count }, (_, i) => `lock-${(i * step) % count}`);
    const failures: unknown[] = [];
    const note = (error: unknown) => {
      failures.push(error);
    };
    for (let round = 0; round < 3; round += 1) {
      const work: Promise<void>[] = [];
      // Each node twice per round, so batches executing at once share nodes.
      [...order(7), ...order(13)].forEach((nodeId, i) => {
        work.push(store.recordHello(helloOf(nodeId, i), `s-${round}`, at(i)).catch(note));
        if (i % 250 === 0) {
          const reversed = order(3 + i / 250).reverse();
          const now = at(i);
          work.push(
            store.flushSightings(reversed.map((id) => ({ nodeId: id, lastSeen: now }))).catch(note),
            store
              .flushStreamEnds(
                reversed.map((id) => ({ nodeId: id, sessionId: "gone", lastSeen: now })),
              )
              .catch(note),
          );
        }
      });
      await Promise.all(work);
    }
    // A deadlock shows as SQLSTATE 40P01.
    expect(failures.map((e) => (e as { code?: string }).code ?? String(e))).toEqual([]);
  });

  it("answers 2,000 concurrent credential reads as few statements, each with its own node", async () => {
    await seedNodes(db.pool, ["cred"], 1000);
    const counted = countingPool(db.pool);
    const store = new NodeStore(counted.pool);
    // Known nodes, each asked twice, and nodes that never enrolled.
    const ids = Array.from({ length: 2000 }, (_, i) =>
      i % 4 === 3 ? `cred-unknown-${i}` : `cred-${(i * 31) % 1000}`,
    );
    const answers = await Promise.all(ids.map((id) => store.credential(id)));
    expect(counted.statements()).toBeLessThan(40);
    const expected = await db.pool.query<{
      id: string;
      token_hash: string;
      enabled: boolean;
      pending: boolean;
    }>("select id, token_hash, enabled, pending from nodes where id like 'cred-%'");
    const byId = new Map(expected.rows.map((r) => [r.id, r]));
    ids.forEach((id, i) => {
      const row = byId.get(id);
      expect(answers[i]).toEqual(
        row
          ? { id, tokenHash: row.token_hash, enabled: row.enabled, pending: row.pending }
          : undefined,
      );
    });
    expect(answers.filter((a) => a === undefined)).toHaveLength(500);
    expect(answers.some((a) => a?.enabled === false)).toBe(true);
  });

  it("answers undefined for a node id PostgreSQL text cannot hold, without failing others", async () => {
    await seedNodes(db.pool, ["nul"], 2);
    const store = new NodeStore(db.pool, { batching: { maxInFlight: 1, maxBatch: 100 } });
    const answers = await Promise.all(
      ["nul-0", "nul-\u0000", "nul-1"].map((id) => store.credential(id)),
    );
    expect(answers.map((a) => a?.id)).toEqual(["nul-0", undefined, "nul-1"]);
  });
});
