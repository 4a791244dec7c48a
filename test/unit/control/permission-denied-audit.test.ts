/**
 * Calls refused for their role are audited and logged at most once per token per window, each
 * event counting the refusals suppressed before it, so a token probing RPCs in a loop grows
 * the audit table by one row per token per minute, whatever addresses it calls from.
 */
import type pg from "pg";
import { describe, expect, it } from "vitest";
import { permissionDeniedAuditor } from "../../../control/admin/auth-denials.js";
import { createLogger } from "../../../control/log.js";
import { ManualClock } from "../../../control/manual-clock.js";

function recordingPool() {
  const rows: unknown[][] = [];
  const pool = {
    query: async (_sql: string, values: unknown[]) => {
      rows.push(values);
      return { rows: [] };
    },
  } as unknown as pg.Pool;
  return { pool, rows };
}

describe("the audit of calls refused for their role", () => {
  it("writes one event per token per minute, counting the refusals between", () => {
    const clock = new ManualClock(Date.parse("2026-01-01T00:00:00Z"));
    const { pool, rows } = recordingPool();
    const audit = permissionDeniedAuditor({ pool, clock, log: createLogger({ level: "silent" }) });
    const denial = (token: string, peer: string) => ({
      token,
      peer,
      method: "agentcontrol.admin.v1.NodeService/CreateJoinToken",
      message: "role viewer may not call CreateJoinToken (needs operator)",
    });
    for (let i = 0; i < 100; i++) audit(denial("grafana", `10.0.0.${i}`));
    audit(denial("ci-viewer", "10.0.1.1"));
    expect(rows.map((r) => r[1])).toEqual(["grafana", "ci-viewer"]);
    clock.advance(60_000);
    audit(denial("grafana", "10.0.0.7"));
    expect(rows).toHaveLength(3);
    expect(String(rows[2]?.[3])).toMatch(/\(and 99 more since the previous event\)$/);
    expect(JSON.parse(String(rows[2]?.[4]))).toMatchObject({ suppressedBefore: 99 });
  });
});
