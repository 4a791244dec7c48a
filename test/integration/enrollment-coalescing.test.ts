/**
 * Join-token enrollments are coalesced into shared statements (control/db/node-enrollment.ts):
 * a burst of new agents costs a few statements, not one statement and commit per node, and
 * every enrollment ends exactly as it would have alone, in call order: created, re-enrolled
 * by a grant, a reset or its own enrollment key (audited), or refused with nothing written.
 */
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Database, openDatabase } from "../../control/db/database.js";
import {
  type Enrollment,
  type EnrollOutcome,
  type NodeHello,
  NodeStore,
  type ReenrollGrant,
} from "../../control/db/node-store.js";
import { createLogger } from "../../control/log.js";
import { NODES_CHANNEL } from "../../control/shared/notify-channels.js";
import { countingPool } from "../helpers/counting-pool.js";
import { createTestDatabase, type TestDatabase } from "../helpers/database.js";

function helloOf(nodeId: string, i: number, overrides: Partial<NodeHello> = {}): NodeHello {
  return {
    nodeId,
    labels: { pool: `p${i % 4}`, zone: `z-${i}` },
    pool: `p${i % 4}`,
    platform: "linux-amd64",
    agentVersion: `1.${i % 9}.0`,
    previousVersion: "",
    bootId: `boot-${i}`,
    capabilities: ["upgrade.v1", "config.v1"].slice(0, i % 3),
    confirmedSequence: (i * 13) % 60,
    ...overrides,
  };
}

const at = (seconds: number) => new Date(Date.UTC(2025, 0, 1) + seconds * 1000);

function enrollmentOf(
  nodeId: string,
  i: number,
  options: { grant?: ReenrollGrant; key?: string; joinToken?: string } = {},
): Enrollment {
  return {
    hello: helloOf(nodeId, i),
    sessionId: `s-${i}`,
    joinTokenId: options.joinToken ?? "jt-1",
    tokenHash: `token-hash-${i}`,
    grant: options.grant ?? null,
    enrollmentKeyHash: options.key ?? null,
    peer: `10.0.0.${i % 250}:4000`,
    now: at(i),
  };
}

/** Every column of the nodes `<prefix>-*`, keyed by the id without its prefix. */
async function rowsOf(pool: pg.Pool, prefix: string): Promise<Map<string, unknown>> {
  const result = await pool.query("select * from nodes where id like $1 || '-%' order by id", [
    prefix,
  ]);
  return new Map(
    result.rows.map((row: { id: string }) => [
      row.id.slice(prefix.length + 1),
      { ...row, id: undefined },
    ]),
  );
}

/** The re-enrollments audited for nodes `<prefix>-*`, without the prefix, by node and time. */
async function auditOf(pool: pg.Pool, prefix: string): Promise<unknown[]> {
  const result = await pool.query<{ node_id: string; message: string; detail: { via: string } }>(
    "select node_id, message, detail, actor, actor_ip, time from audit_events where node_id like $1 || '-%' order by node_id, time",
    [prefix],
  );
  return result.rows.map((row) => ({
    ...row,
    node_id: row.node_id.slice(prefix.length + 1),
    message: row.message.replaceAll(`${prefix}-`, ""),
  }));
}

/**
 * Seeds, in one statement, the nodes `<prefix>-<i>` every mixed scenario starts from: 0–9 enrolled by jt-1 with
 * key hash `key-<i>`, 10–14 reset by an operator, 15–19 enrolled by jt-2.
 */
async function seedExisting(pool: pg.Pool, prefixes: string[]): Promise<void> {
  await pool.query(
    `insert into nodes (id, token_hash, join_token_id, enrollment_key_hash, reset_at, version)
     select prefix || '-' || i, 'old-' || i, case when i >= 15 then 'jt-2' else 'jt-1' end,
            case when i < 10 then 'key-' || i end,
            case when i between 10 and 14 then timestamptz '2024-06-01' end, 3
     from unnest($1::text[]) as prefix, generate_series(0, 19) as i`,
    [prefixes],
  );
}

/**
 * The mixed calls: new ids, ids enrolled twice in one burst, existing nodes with and without
 * a grant, with their own key, another key or another token, and reset nodes.
 */
function mixedCalls(prefix: string): Enrollment[] {
  const id = (n: number | string) => `${prefix}-${n}`;
  return [
    enrollmentOf(id("new-a"), 100),
    enrollmentOf(id(0), 101), // exists, no grant: refused
    enrollmentOf(id(1), 102, { key: "key-1" }), // its own key, same token: re-enrolled
    enrollmentOf(id(2), 103, { key: "key-1" }), // another key: refused
    enrollmentOf(id(3), 104, { key: "key-3", joinToken: "jt-2" }), // another token: refused
    enrollmentOf(id(4), 105, { grant: "allow_reenroll" }),
    enrollmentOf(id(5), 106, { grant: "named" }),
    enrollmentOf(id(10), 107), // reset: re-enrolled, the reset used up
    enrollmentOf(id("new-a"), 108), // second of a new id, no grant: refused
    enrollmentOf(id(10), 109), // the reset is used up: refused
    enrollmentOf(id("new-b"), 110, { key: "kb" }),
    enrollmentOf(id("new-b"), 111, { key: "kb" }), // same key and token: re-enrolled
    enrollmentOf(id("new-c"), 112, { grant: "allow_reenroll" }),
    enrollmentOf(id("new-c"), 113, { grant: "allow_reenroll" }),
    enrollmentOf(id(15), 114), // jt-2's node, no grant: refused
    enrollmentOf(id(11), 115, { grant: "named" }), // reset and a grant: via the grant
  ];
}

describe("coalesced join-token enrollments", () => {
  let testDb: TestDatabase;
  let db: Database;
  beforeAll(async () => {
    testDb = await createTestDatabase("enrollment_coalescing");
    db = await openDatabase({ url: testDb.url, log: createLogger({ level: "silent" }) });
    // The enrollment statement judges the join tokens it names: these two are valid.
    await db.pool.query(
      `insert into join_tokens (id, secret_hash, description, created_at, expires_at, uses,
         created_by, node_ids, allow_reenroll)
       select id, 'x', '', now(), now() + interval '1 day', 0, 'test', '[]', false
         from unnest(array['jt-1', 'jt-2']) as id`,
    );
  });
  afterAll(async () => {
    await db?.close();
    await testDb?.drop();
  });

  it("enrolls 2,000 concurrent new agents in few statements, each created with its own row", async () => {
    const counted = countingPool(db.pool);
    const store = new NodeStore(counted.pool, { holder: "control-a" });
    const outcomes = await Promise.all(
      Array.from({ length: 2000 }, (_, i) => store.enroll(enrollmentOf(`burst-${i}`, i))),
    );
    expect(outcomes.every((o) => o.kind === "created")).toBe(true);
    expect(counted.statements()).toBeLessThan(40);
    const rows = await rowsOf(db.pool, "burst");
    expect(rows.size).toBe(2000);
    expect(rows.get("7")).toMatchObject({
      token_hash: "token-hash-7",
      join_token_id: "jt-1",
      session_id: "s-7",
      held_by: "control-a",
      online: true,
      boot_id: "boot-7",
      labels: { pool: "p3", zone: "z-7" },
      confirmed_sequence: String((7 * 13) % 60),
      first_seen: at(7),
      reset_at: null,
    });
  });

  it("ends every enrollment of a mixed burst as enrolling them one by one in call order does", async () => {
    await seedExisting(db.pool, ["mixb", "mixs"]);
    const counted = countingPool(db.pool);
    const batched = new NodeStore(counted.pool, {
      holder: "control-a",
      batching: { maxInFlight: 1, maxBatch: 100 },
    });
    const batchedOutcomes = await Promise.all(mixedCalls("mixb").map((e) => batched.enroll(e)));
    // One lone first call, then the rest in rounds of distinct ids (new-a, 10, new-b, new-c
    // come twice).
    expect(counted.statements()).toBeLessThanOrEqual(3);
    const single = new NodeStore(db.pool, { holder: "control-a" });
    const singleOutcomes: EnrollOutcome[] = [];
    for (const e of mixedCalls("mixs")) singleOutcomes.push(await single.enroll(e));

    expect(batchedOutcomes).toEqual(singleOutcomes);
    expect(batchedOutcomes).toEqual([
      { kind: "created", pending: false },
      { kind: "refused" },
      { kind: "reenrolled", via: "enrollment_key", pending: false },
      { kind: "refused" },
      { kind: "refused" },
      { kind: "reenrolled", via: "allow_reenroll", pending: false },
      { kind: "reenrolled", via: "named", pending: false },
      { kind: "reenrolled", via: "reset", pending: false },
      { kind: "refused" },
      { kind: "refused" },
      { kind: "created", pending: false },
      { kind: "reenrolled", via: "enrollment_key", pending: false },
      { kind: "created", pending: false },
      { kind: "reenrolled", via: "allow_reenroll", pending: false },
      { kind: "refused" },
      { kind: "reenrolled", via: "named", pending: false },
    ]);
    expect(await rowsOf(db.pool, "mixb")).toEqual(await rowsOf(db.pool, "mixs"));
    expect(await auditOf(db.pool, "mixb")).toEqual(await auditOf(db.pool, "mixs"));
    const refused = (await rowsOf(db.pool, "mixb")).get("0");
    expect(refused).toMatchObject({ token_hash: "old-0", version: 3 });
  });

  it("notifies the ids it enrolled, on the statement's commit", async () => {
    const listener = await db.pool.connect();
    const heard: string[] = [];
    listener.on("notification", (n) => {
      if (n.channel === NODES_CHANNEL) heard.push(...(n.payload ?? "").split("\n"));
    });
    await listener.query(`listen ${NODES_CHANNEL}`);
    try {
      const store = new NodeStore(db.pool, { batching: { maxInFlight: 1, maxBatch: 100 } });
      await Promise.all(
        Array.from({ length: 50 }, (_, i) => store.enroll(enrollmentOf(`heard-${i}`, i))),
      );
      const deadline = Date.now() + 5000;
      while (heard.filter((id) => id.startsWith("heard-")).length < 50) {
        if (Date.now() > deadline) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(new Set(heard.filter((id) => id.startsWith("heard-"))).size).toBe(50);
    } finally {
      await listener.query(`unlisten ${NODES_CHANNEL}`);
      listener.release();
    }
  });

  it("fails only the enrollment PostgreSQL refuses, not the others of its statement", async () => {
    const store = new NodeStore(db.pool, { batching: { maxInFlight: 1, maxBatch: 100 } });
    const settled = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) =>
        store.enroll(
          i === 5
            ? {
                ...enrollmentOf(`bad-${i}`, i),
                hello: helloOf(`bad-${i}`, i, { pool: "a\u0000b" }),
              }
            : enrollmentOf(`bad-${i}`, i),
        ),
      ),
    );
    expect(settled.map((s) => s.status)).toEqual([
      ...Array(5).fill("fulfilled"),
      "rejected",
      ...Array(2).fill("fulfilled"),
    ]);
    const enrolled = await db.pool.query("select id from nodes where id like 'bad-%' order by id");
    expect(enrolled.rows.map((r) => r.id)).toEqual([0, 1, 2, 3, 4, 6, 7].map((i) => `bad-${i}`));
  });

  it("never deadlocks when enrollment statements share node ids in other orders", async () => {
    const count = 600;
    const store = new NodeStore(db.pool, { batching: { maxInFlight: 4, maxBatch: 150 } });
    const order = (step: number) => Array.from({ length: count }, (_, i) => (i * step) % count);
    const failures: unknown[] = [];
    const outcomes: EnrollOutcome[] = [];
    await Promise.all(
      [...order(7), ...order(13), ...order(11).reverse()].map((n, i) =>
        store.enroll(enrollmentOf(`lock-${n}`, i, { grant: "allow_reenroll" })).then(
          (o) => outcomes.push(o),
          (e) => failures.push(e),
        ),
      ),
    );
    // A deadlock shows as SQLSTATE 40P01.
    expect(failures.map((e) => (e as { code?: string }).code ?? String(e))).toEqual([]);
    expect(outcomes.filter((o) => o.kind === "created")).toHaveLength(count);
    expect(outcomes.filter((o) => o.kind === "reenrolled")).toHaveLength(2 * count);
  });
});
