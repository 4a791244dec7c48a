/**
 * A batch of enrollments is written in several statements (one per round of distinct node
 * ids, halved around data errors), each committed on its own. A statement that fails must
 * fail only its own enrollments: those an earlier statement committed were enrolled, and
 * their agents must get their Welcome.
 */
import type pg from "pg";
import { describe, expect, it } from "vitest";
import { type Enrollment, enrollBatch } from "../../../control/db/node-enrollment.js";

function enrollment(nodeId: string): Enrollment {
  return {
    hello: {
      nodeId,
      labels: {},
      pool: "",
      platform: "linux-amd64",
      agentVersion: "1.0.0",
      previousVersion: "",
      bootId: "b",
      capabilities: [],
      confirmedSequence: 0,
    },
    sessionId: `s-${nodeId}`,
    joinTokenId: "jt",
    tokenHash: `h-${nodeId}`,
    grant: null,
    enrollmentKeyHash: null,
    peer: "127.0.0.1:1",
    now: new Date(0),
  };
}

/** A pool answering each statement with `answers[i]`: the ids it enrolled, or an error. */
function scriptedPool(answers: (string[] | Error)[]): { pool: pg.Pool; statements: () => number } {
  let calls = 0;
  const pool = {
    query: async (_sql: string, params: unknown[]) => {
      const answer = answers[calls++];
      if (answer instanceof Error) throw answer;
      const ids = params[0] as string[];
      const rows = (answer ?? ids).map((id) => ({ id, enrolled: true, created: true, via: null }));
      return { rows };
    },
  } as unknown as pg.Pool;
  return { pool, statements: () => calls };
}

const connectionLost = () => Object.assign(new Error("terminating connection"), { code: "57P01" });
const badValue = () => Object.assign(new Error("invalid byte sequence"), { code: "22021" });

describe("enrollBatch", () => {
  it("keeps what the first round committed when the round of a repeated id fails", async () => {
    const { pool, statements } = scriptedPool([["a", "b", "c"], connectionLost()]);
    const results = await enrollBatch(
      pool,
      { holder: null, requireApproval: false },
      ["a", "b", "c", "a"].map(enrollment),
    );
    expect(statements()).toBe(2);
    expect(results.map((r) => r.ok)).toEqual([true, true, true, false]);
    expect(results[0]).toEqual({ ok: true, outcome: { kind: "created" } });
    expect((results[3] as { error: { code: string } }).error.code).toBe("57P01");
  });

  it("keeps the half that committed when the other half's statement fails otherwise", async () => {
    // The whole statement meets a data error; the first half commits; the second half's
    // statement loses its connection.
    const { pool } = scriptedPool([badValue(), ["a", "b"], connectionLost()]);
    const results = await enrollBatch(
      pool,
      { holder: null, requireApproval: false },
      ["a", "b", "c", "d"].map(enrollment),
    );
    expect(results.map((r) => r.ok)).toEqual([true, true, false, false]);
  });

  it("fails every enrollment of a statement that fails for another reason than its values", async () => {
    const { pool } = scriptedPool([connectionLost()]);
    const results = await enrollBatch(
      pool,
      { holder: null, requireApproval: false },
      ["a", "b"].map(enrollment),
    );
    expect(results.map((r) => r.ok)).toEqual([false, false]);
  });

  it("says refused for an enrollment its statement did not write", async () => {
    const { pool } = scriptedPool([["b"]]);
    const results = await enrollBatch(
      pool,
      { holder: null, requireApproval: false },
      ["a", "b"].map(enrollment),
    );
    expect(results).toEqual([
      { ok: true, outcome: { kind: "refused" } },
      { ok: true, outcome: { kind: "created" } },
    ]);
  });
});
