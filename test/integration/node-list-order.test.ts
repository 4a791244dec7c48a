/**
 * ListNodes at fleet scale, against a real Control and PostgreSQL: a search by a part of the
 * node id (case-insensitive, its wildcards literal) and the sort orders the dashboard's
 * node list offers (node id, pool, agent version, last seen; each reversible), each paged
 * through in small pages that together list every matching node once, in order.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Node, NodeService } from "../../proto/gen/agentcontrol/admin/v1/node_pb.js";
import { startTestControl, type TestControl } from "../helpers/control.js";
import { refusal } from "./campaign-fixture.js";

interface Seed {
  id: string;
  pool: string;
  version: string;
  /** Minutes before the base instant; null: never seen. */
  seenAgo: number | null;
}

const BASE = Date.parse("2026-12-07T12:00:00Z");
const POOLS = ["db", "web", "cache"];
const VERSIONS = ["1.10.0", "1.2.0", "1.9.1", ""];

/** 23 nodes, with ties in every column and some never seen. */
const SEEDS: Seed[] = Array.from({ length: 23 }, (_, i) => ({
  id: `${["web", "db", "Edge"][i % 3]}-${String(i).padStart(3, "0")}`,
  pool: POOLS[i % 3] as string,
  version: VERSIONS[i % 4] as string,
  seenAgo: i % 5 === 0 ? null : (i * 7) % 11,
}));
SEEDS.push({ id: "odd%_x", pool: "web", version: "1.2.0", seenAgo: 3 });

/** The expected order of `seeds` by `key` (then id), ascending or descending. */
function expected(
  seeds: readonly Seed[],
  key: (s: Seed) => string | number | null,
  descending = false,
): string[] {
  const cmp = (a: Seed, b: Seed) => {
    const x = key(a);
    const y = key(b);
    const byKey = x === y ? 0 : x === null ? -1 : y === null ? 1 : x < y ? -1 : 1;
    return byKey !== 0 ? byKey : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
  };
  const sorted = [...seeds].sort(cmp).map((s) => s.id);
  return descending ? sorted.reverse() : sorted;
}

describe("ListNodes' id search and sort orders, paged", { timeout: 120_000 }, () => {
  let tc: TestControl;

  beforeAll(async () => {
    tc = await startTestControl();
    const client = new pg.Client({ connectionString: tc.database.url });
    await client.connect();
    try {
      for (const s of SEEDS) {
        await client.query(
          "insert into nodes (id, pool, agent_version, first_seen, last_seen) values ($1, $2, $3, $4, $4)",
          [
            s.id,
            s.pool,
            s.version,
            s.seenAgo === null ? null : new Date(BASE - s.seenAgo * 60_000),
          ],
        );
      }
    } finally {
      await client.end();
    }
  });

  afterAll(async () => {
    await tc?.stop();
  });

  /** Every page of a listing, `pageSize` at a time. */
  async function all(
    request: { orderBy?: string; nodeIdContains?: string; pool?: string },
    pageSize = 4,
  ): Promise<{ ids: string[]; total: number; pages: Node[][] }> {
    const client = tc.client(NodeService);
    const pages: Node[][] = [];
    let pageToken = "";
    let total = -1;
    do {
      const page = await client.listNodes({ ...request, pageSize, pageToken });
      pages.push(page.nodes);
      total = page.totalSize;
      pageToken = page.nextPageToken;
    } while (pageToken !== "" && pages.length < 50);
    return { ids: pages.flat().map((n) => n.nodeId), total, pages };
  }

  const seen = (s: Seed) => (s.seenAgo === null ? null : BASE - s.seenAgo * 60_000);

  it.each([
    ["node_id", (s: Seed) => s.id, false],
    ["node_id desc", (s: Seed) => s.id, true],
    ["pool", (s: Seed) => s.pool, false],
    ["pool desc", (s: Seed) => s.pool, true],
    ["agent_version", (s: Seed) => s.version, false],
    ["agent_version desc", (s: Seed) => s.version, true],
    ["last_seen", seen, false],
    ["last_seen desc", seen, true],
  ] as const)("orders by %s across pages of 4, every node once", async (orderBy, key, desc) => {
    const { ids, total } = await all({ orderBy });
    expect(total).toBe(SEEDS.length);
    expect(ids).toEqual(expected(SEEDS, key, desc));
  });

  it("finds nodes by a part of their id, case-insensitive, with the total of the matches", async () => {
    const { ids, total } = await all({ nodeIdContains: "EDGE-0" });
    const want = SEEDS.filter((s) => s.id.toLowerCase().includes("edge-0")).map((s) => s.id);
    expect(want.length).toBeGreaterThan(4);
    expect(ids).toEqual([...want].sort());
    expect(total).toBe(want.length);
    const prefix = await all({ nodeIdContains: "web-00" });
    expect(prefix.ids).toEqual(["web-000", "web-003", "web-006", "web-009"]);
  });

  it("combines the search with a filter and an order", async () => {
    const { ids, total } = await all(
      { nodeIdContains: "-01", pool: "web", orderBy: "last_seen desc" },
      2,
    );
    const want = SEEDS.filter((s) => s.id.includes("-01") && s.pool === "web");
    expect(total).toBe(want.length);
    expect(ids).toEqual(expected(want, seen, true));
  });

  it("takes % and _ in the search literally", async () => {
    expect((await all({ nodeIdContains: "%_" })).ids).toEqual(["odd%_x"]);
    expect((await all({ nodeIdContains: "_" })).ids).toEqual(["odd%_x"]);
    expect((await all({ nodeIdContains: "nothing-like-this" })).total).toBe(0);
  });

  it("refuses an unknown order, a page token of another order and an overlong search", async () => {
    const client = tc.client(NodeService);
    const unknown = await refusal(client.listNodes({ orderBy: "labels" }));
    expect(unknown.message).toMatch(
      /order_by: "labels" is not one of node_id, pool, agent_version, last_seen/,
    );
    const first = await client.listNodes({ orderBy: "pool", pageSize: 2 });
    const other = await refusal(
      client.listNodes({ orderBy: "last_seen", pageSize: 2, pageToken: first.nextPageToken }),
    );
    expect(other.message).toMatch(/page_token was issued for order_by "pool", not "last_seen"/);
    const long = await refusal(client.listNodes({ nodeIdContains: "x".repeat(129) }));
    expect(long.message).toMatch(/node_id_contains: at most 128 characters/);
  });
});
