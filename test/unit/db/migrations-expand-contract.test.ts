/**
 * Migrations follow expand/contract (control/db/migrations/README.md): no migration drops,
 * renames, retypes or makes required what the release before it reads, except a contract step
 * listed below that lands at least one release after the last release that read its target.
 * The releases of the migrations go up one at a time and Control knows the newest.
 */
import { describe, expect, it } from "vitest";
import { MIGRATIONS, type ReleasedMigration } from "../../../control/db/migrations/index.js";
import { SCHEMA_RELEASE } from "../../../control/db/schema-release.js";
import {
  type BreakingStep,
  breakingSteps,
  type ContractStep,
  expandContractProblems,
} from "../../helpers/migration-steps.js";

/**
 * The contract steps that have landed: each names its migration, what it removes, and the
 * first release whose code no longer reads that. Empty while every migration only expands.
 */
const CONTRACT_STEPS: readonly ContractStep[] = [];

describe("the migrations Control runs", () => {
  it("only expand, apart from the listed contract steps, each a release after its target's last reader", async () => {
    expect(await expandContractProblems(MIGRATIONS, CONTRACT_STEPS)).toEqual([]);
  });

  it("carry releases from 1 that never go back and rise one at a time, the newest Control's own", () => {
    const releases = MIGRATIONS.map((m) => m.release);
    expect(releases[0]).toBe(1);
    for (let i = 1; i < releases.length; i++) {
      const step = (releases[i] as number) - (releases[i - 1] as number);
      expect(
        step === 0 || step === 1,
        `${MIGRATIONS[i]?.name} after ${MIGRATIONS[i - 1]?.name}`,
      ).toBe(true);
    }
    expect(SCHEMA_RELEASE).toBe(releases.at(-1));
    expect(new Set(MIGRATIONS.map((m) => m.name)).size).toBe(MIGRATIONS.length);
  });
});

describe("reading migration SQL for breaking steps", () => {
  it.each<[string, BreakingStep[]]>([
    ["drop table campaign_gate_results", [{ kind: "drop_table", target: "campaign_gate_results" }]],
    [
      'DROP TABLE IF EXISTS a, "b" CASCADE',
      [
        { kind: "drop_table", target: "a" },
        { kind: "drop_table", target: "b" },
      ],
    ],
    ["drop view fleet_view", [{ kind: "drop_view", target: "fleet_view" }]],
    ["truncate table nodes restart identity", [{ kind: "truncate", target: "nodes" }]],
    ["alter table nodes rename to machines", [{ kind: "rename_table", target: "nodes" }]],
    ["alter table nodes drop column held_by", [{ kind: "drop_column", target: "nodes.held_by" }]],
    [
      "alter table releases\n  drop yanked_at, drop column if exists yanked_by",
      [
        { kind: "drop_column", target: "releases.yanked_at" },
        { kind: "drop_column", target: "releases.yanked_by" },
      ],
    ],
    [
      "alter table nodes rename column held_by to holder",
      [{ kind: "rename_column", target: "nodes.held_by" }],
    ],
    [
      "alter table nodes alter column version type bigint using version::bigint",
      [{ kind: "retype_column", target: "nodes.version" }],
    ],
    [
      "alter table nodes alter column version set data type text",
      [{ kind: "retype_column", target: "nodes.version" }],
    ],
    [
      "alter table nodes alter held_by set not null",
      [{ kind: "require_column", target: "nodes.held_by" }],
    ],
    [
      "alter table nodes add column pool text not null",
      [{ kind: "add_required_column", target: "nodes.pool" }],
    ],
    [
      "create table t (id text not null); alter table only t drop column id; -- drop table x",
      [{ kind: "drop_column", target: "t.id" }],
    ],
  ])("%s", (sql, steps) => {
    expect(breakingSteps(sql)).toEqual(steps);
  });

  it.each([
    "create table fleet_settings (name text primary key, value text not null)",
    "alter table releases add column yanked_at timestamptz null, add column yank_reason text",
    "alter table nodes add column pool text not null default 'default'",
    "alter table nodes add column n bigint not null generated always as identity",
    "alter table nodes add constraint nodes_pool_check check (pool <> '') not valid",
    "alter table nodes drop constraint nodes_pool_check",
    "alter table nodes alter column pool drop not null",
    "alter table nodes alter column pool set default 'x'",
    "alter table nodes alter column pool drop default",
    "drop index campaigns_created_by_idx",
    "create index nodes_held_by_idx on nodes (held_by) where online",
    "alter table artifact_files alter column content set storage external",
    "insert into fleet_settings (name, value) values ('drop table x; rename', 'v')",
  ])("%s: no breaking step", (sql) => {
    expect(breakingSteps(sql)).toEqual([]);
  });
});

/** A migration of `release` whose up() adds `sql`. */
function migration(name: string, release: number, sql: string): ReleasedMigration {
  return {
    name,
    release,
    class: class {
      private readonly queries: string[] = [];
      async up() {
        this.queries.push(sql);
      }
      getQueries() {
        return this.queries;
      }
    } as unknown as ReleasedMigration["class"],
  };
}

describe("judging migrations against expand/contract", () => {
  const drop = migration("0031-drop-pool", 4, "alter table nodes drop column pool");
  const step: ContractStep = {
    migration: "0031-drop-pool",
    kind: "drop_column",
    target: "nodes.pool",
    unreadSince: 3,
  };

  it("refuses a drop that is no listed contract step", async () => {
    expect(await expandContractProblems([drop], [])).toEqual([
      "0031-drop-pool (release 4): drop_column nodes.pool breaks the previous release and is no listed contract step",
    ]);
  });

  it("accepts a contract step one release after the last release that read its target", async () => {
    expect(await expandContractProblems([drop], [step])).toEqual([]);
  });

  it("refuses a contract step in the release that stopped reading its target (the previous one still reads it)", async () => {
    expect(await expandContractProblems([drop], [{ ...step, unreadSince: 4 }])).toEqual([
      "0031-drop-pool (release 4): drop_column nodes.pool lands before release 5: release 3 still reads it",
    ]);
  });

  it("refuses a listed contract step no migration makes", async () => {
    const expand = migration("0031-drop-pool", 4, "alter table nodes add column zone text");
    expect(await expandContractProblems([expand], [step])).toEqual([
      "contract step 0031-drop-pool: drop_column nodes.pool is in no migration",
    ]);
  });
});
