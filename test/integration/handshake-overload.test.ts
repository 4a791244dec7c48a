/**
 * A Control that cannot keep up with a burst of handshakes (here its database is made slow:
 * every node row written waits 0.1 s) must refuse what it cannot finish before Agents stop
 * waiting for their Welcome (30 s), never take on all of them at once and answer none in
 * time. With a fixed cap of 512 at once, a burst of 400 new agents became one enrollment
 * statement of some 400 rows (40 s): every agent gave up first, retried, and the next burst
 * did the same. The admission follows the rate handshakes finish at.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Fleet, startFleet } from "../../agent-sim/index.js";
import { startTestControl, type TestControl } from "../helpers/control.js";

const AGENTS = 400;

describe("a burst of handshakes larger than Control can answer in time", () => {
  let tc: TestControl;
  let fleet: Fleet | undefined;
  beforeAll(async () => {
    tc = await startTestControl();
    await tc.control.db.pool.query(`
      create function slow_node_write() returns trigger language plpgsql as $$
        begin perform pg_sleep(0.1); return new; end $$;
      create trigger slow_node_write before insert on nodes
        for each row execute function slow_node_write()`);
  });
  afterAll(async () => {
    await fleet?.stop();
    await tc?.stop();
  });

  it("is admitted at the rate Control finishes handshakes: every agent is welcomed", async () => {
    fleet = await startFleet({
      server: tc.agentAddress,
      joinToken: await tc.joinToken(),
      count: AGENTS,
      seed: 23,
      // The default wait for a Welcome (30 s); short backoffs keep the test short.
      welcomeTimeoutMs: 30_000,
      backoff: { baseMs: 100, capMs: 2000 },
    });
    await fleet.waitUntil(
      (f) => f.welcomedCount() === AGENTS,
      150_000,
      "every agent of the burst welcomed",
    );
    // Refused attempts were retried.
    expect(fleet.stats().connects).toBeGreaterThan(AGENTS);
    // No agent gave up on a Welcome after Control had enrolled it: each such agent would have
    // enrolled again with its enrollment key, audited as a re-enrollment.
    const reenrolled = await tc.control.db.pool.query(
      "select count(*)::int as n from audit_events where action = 'node.reenroll'",
    );
    expect(reenrolled.rows[0]?.n).toBe(0);
  }, 180_000);
});
