/**
 * The schema release a Control accepts: its own or an older one (it migrates), one ahead (a
 * newer Control beside it during an upgrade), never further ahead.
 */
import { describe, expect, it } from "vitest";
import {
  judgeSchemaRelease,
  type RunSql,
  readSchemaRelease,
  recordSchemaRelease,
  SchemaTooNewError,
} from "../../../control/db/schema-release.js";

describe("judgeSchemaRelease", () => {
  it.each([
    [1, 1, "migrate"],
    [1, 2, "migrate"],
    [1, 7, "migrate"],
    [2, 2, "migrate"],
    [3, 2, "one_ahead"],
    [8, 7, "one_ahead"],
    [4, 2, "too_new"],
    [9, 2, "too_new"],
  ] as const)("schema %i, Control %i: %s", (stored, known, kind) => {
    expect(judgeSchemaRelease(stored, known)).toEqual({ kind, stored, known });
  });

  it.each([
    [0, 2],
    [2, 0],
    [-1, 2],
    [1.5, 2],
    [Number.NaN, 2],
  ])("refuses a release that is no positive integer (%s, %s)", (stored, known) => {
    expect(() => judgeSchemaRelease(stored, known)).toThrow(RangeError);
  });
});

describe("SchemaTooNewError", () => {
  it("is one line naming both releases and the oldest Control that runs on the schema", () => {
    const message = new SchemaTooNewError(4, 2).message;
    expect(message).not.toContain("\n");
    expect(message).toContain("schema is at release 4");
    expect(message).toContain("this Control (release 2)");
    expect(message).toContain("release 3 or newer");
  });
});

describe("reading and recording the release", () => {
  /** A database of one optional table and row, answering the reads. */
  function fakeDatabase(table: boolean, row?: number) {
    const state = { table, row };
    const run: RunSql = async (sql) => {
      if (sql.includes("to_regclass")) return [{ present: state.table }];
      if (sql.startsWith("select release"))
        return state.row === undefined ? [] : [{ release: state.row }];
      throw new Error(`unexpected statement ${sql}`);
    };
    return { state, run };
  }

  it("takes a schema without the table, or without its row, as release 1", async () => {
    expect(await readSchemaRelease(fakeDatabase(false).run)).toBe(1);
    expect(await readSchemaRelease(fakeDatabase(true).run)).toBe(1);
    expect(await readSchemaRelease(fakeDatabase(true, 5).run)).toBe(5);
  });

  // That it only raises the release is judged on PostgreSQL (test/integration/schema-release.test.ts).
  it("sends one upsert of the release that raises it only", async () => {
    const statements: string[] = [];
    await recordSchemaRelease(async (sql, params) => {
      statements.push(`${sql.replace(/\s+/g, " ")} ${JSON.stringify(params)}`);
      return [];
    }, 3);
    expect(statements).toHaveLength(1);
    expect(statements[0]).toContain("on conflict (singleton) do update");
    expect(statements[0]).toContain("where schema_release.release < excluded.release");
    expect(statements[0]).toContain("[3]");
  });
});
