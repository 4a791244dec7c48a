/**
 * The partial index the pool-budget read goes through (`campaign_nodes_slot_idx`, migration
 * 0022) lists the node states that may hold a slot. A landed migration never changes, so its
 * list is written out; these tests hold it to the engine's traits (`SLOT_NODE_STATES`): a state
 * whose `holdsSlot` changes fails here until a new migration builds the index on the new list
 * (and the read's predicate, derived from the traits, would otherwise no longer imply the
 * index's, so PostgreSQL would scan every campaign's history).
 */
import { describe, expect, it } from "vitest";
import { ROLLBACK_SLOT_NODE_STATES, SLOT_NODE_STATES } from "../../../control/campaign/index.js";
import {
  ROLLBACK_SLOT_STATES_SQL,
  rollbackUnjudgedSql,
  SLOT_STATES_SQL,
} from "../../../control/campaign-store/sql/node-state-sql.js";
import { IN_FLIGHT_ELSEWHERE_SQL } from "../../../control/campaign-store/sql/reads.js";
import { SLOT_INDEX_STATES } from "../../../control/db/migrations/0022-slot-index.js";
import { ROLLBACK_SLOT_INDEX_STATES } from "../../../control/db/migrations/0025-rollback-slot-index.js";
import { MIGRATIONS } from "../../../control/db/migrations/index.js";
import { upSql } from "../../helpers/migration-steps.js";

/** The states of the newest `create index <name> … where state in (…)` over the migrations. */
async function indexPredicate(name: string): Promise<string[] | undefined> {
  let found: string[] | undefined;
  for (const m of MIGRATIONS) {
    for (const sql of await upSql(m)) {
      const match = new RegExp(
        String.raw`create\s+index\s+${name}\s+on\s+campaign_nodes\s*\(pool\)\s*where\s+state\s+in\s*\(([^)]*)\)`,
        "i",
      ).exec(sql);
      if (match?.[1] !== undefined) {
        found = match[1].split(",").map((s) => s.trim().replace(/^'|'$/g, ""));
      }
    }
  }
  return found;
}

describe("the partial index of the nodes that may hold a slot", () => {
  it("lists the states whose traits say they may hold a slot, in the traits' order", async () => {
    expect(SLOT_NODE_STATES).toContain("rolling_back");
    expect([...SLOT_INDEX_STATES]).toEqual([...SLOT_NODE_STATES]);
    expect(await indexPredicate("campaign_nodes_slot_idx")).toEqual([...SLOT_NODE_STATES]);
  });

  it("is what the pool-budget read's predicate says word for word, so the planner may use it", () => {
    expect(IN_FLIGHT_ELSEWHERE_SQL).toContain(`cn.state in (${SLOT_STATES_SQL})`);
  });
});

describe("the partial index of the final nodes with a rollback pending (migration 0025)", () => {
  it("lists the final states whose traits hold a slot while a rollback is pending, in the traits' order", async () => {
    expect(ROLLBACK_SLOT_NODE_STATES).toEqual(["failed", "timed_out", "skipped", "canceled"]);
    expect([...ROLLBACK_SLOT_INDEX_STATES]).toEqual([...ROLLBACK_SLOT_NODE_STATES]);
    expect(await indexPredicate("campaign_nodes_rollback_slot_idx")).toEqual([
      ...ROLLBACK_SLOT_NODE_STATES,
    ]);
  });

  it("says what the pool-budget read's second arm says word for word, so the planner may use it", async () => {
    const statements = (await Promise.all(MIGRATIONS.map((m) => upSql(m)))).flat();
    const index = statements.find((sql) => sql.includes("campaign_nodes_rollback_slot_idx on"));
    expect(index?.replace(/\s+/g, " ")).toContain(rollbackUnjudgedSql("cn").replaceAll("cn.", ""));
    expect(IN_FLIGHT_ELSEWHERE_SQL).toContain(`cn.state in (${ROLLBACK_SLOT_STATES_SQL})`);
    expect(IN_FLIGHT_ELSEWHERE_SQL).toContain(rollbackUnjudgedSql("cn"));
  });
});
