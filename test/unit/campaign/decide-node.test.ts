import { describe, expect, it } from "vitest";
import type { NodeState } from "../../../control/campaign/index.js";
import { decide } from "../../../control/campaign/index.js";
import type { Harness } from "./harness.js";
import {
  advance,
  batchIds,
  bringBack,
  configFails,
  fleet,
  goOffline,
  goOnline,
  inState,
  MIN,
  NEW,
  nodeOf,
  OLD,
  reboot,
  report,
  sendFails,
  sent,
  setCapabilities,
  start,
  tick,
} from "./harness.js";

const one = [{ percent: 100, minDurationMs: 0 }];

describe("offering", () => {
  it("offers only the current batch, in canary order", () => {
    const h = start(fleet(100));
    const d = tick(h);
    expect(d.actions.map((a) => a.nodeId)).toEqual(batchIds(h, 0));
    expect(
      d.actions.every((a) => a.kind === "upgrade" && a.version === NEW && a.sequence === 2),
    ).toBe(true);
    expect(batchIds(h, 0)).toHaveLength(5);
  });

  it("keeps at most `concurrency` nodes in flight and offers the next as a slot frees", () => {
    const h = start(fleet(100), { concurrency: 2 });
    tick(h);
    const first = batchIds(h, 0);
    expect(sent(h, "upgrade")).toEqual(first.slice(0, 2));
    bringBack(h, [first[0]!]);
    advance(h, 1000);
    expect(sent(h, "upgrade")).toEqual(first.slice(0, 3));
  });

  it.each([
    { name: "keeps each pool within floor(size × budget %)", budget: 5, expected: { a: 2, b: 3 } },
    {
      name: "allows at least one node per pool even when the budget rounds to 0",
      budget: 1,
      expected: { a: 1, b: 1 },
    },
  ])("$name", ({ budget, expected }) => {
    const h = start(fleet(100, { pool: (i) => (i < 40 ? "a" : "b") }), {
      disruptionBudgetPercent: budget,
      batches: [
        { percent: 50, minDurationMs: 0 },
        { percent: 100, minDurationMs: 0 },
      ],
    });
    tick(h);
    const pools = sent(h, "upgrade").map((id) => nodeOf(h, id).pool);
    expect({
      a: pools.filter((p) => p === "a").length,
      b: pools.filter((p) => p === "b").length,
    }).toEqual(expected);
  });

  it("marks nodes already on the target succeeded at once (already_current)", () => {
    const h = start(fleet(4, { version: (i) => (i === 1 ? NEW : OLD) }), { batches: one });
    tick(h);
    expect(nodeOf(h, "node-001")).toMatchObject({ state: "succeeded", code: "already_current" });
    expect(sent(h, "upgrade")).not.toContain("node-001");
  });

  it("skips nodes without upgrade.v1 (upgrade_unsupported)", () => {
    const h = start(fleet(4, { capabilities: (i) => (i === 2 ? ["config.v1"] : ["upgrade.v1"]) }), {
      batches: one,
      disruptionBudgetPercent: 100,
    });
    tick(h);
    expect(nodeOf(h, "node-002")).toMatchObject({ state: "skipped", code: "upgrade_unsupported" });
    expect(sent(h, "upgrade")).toHaveLength(3);
  });

  it("passes over offline nodes and skips them when only they remain", () => {
    const h = start(fleet(6), { batches: one, concurrency: 2 });
    goOffline(h, "node-000");
    goOffline(h, "node-001");
    tick(h);
    expect(inState(h, "waiting").sort()).toEqual(["node-000", "node-001", ...sentNot(h)].sort());
    for (let i = 0; i < 5 && inState(h, "waiting").some((id) => !id.match(/node-00[01]/)); i++) {
      bringBack(h, inState(h, "offered"));
      advance(h, 1000);
    }
    bringBack(h, inState(h, "offered"));
    advance(h, 1000);
    expect(nodeOf(h, "node-000")).toMatchObject({ state: "skipped", code: "node_offline" });
    expect(nodeOf(h, "node-001")).toMatchObject({ state: "skipped", code: "node_offline" });
    expect(inState(h, "verifying")).toHaveLength(0);
  });

  it("offers an offline node when it is back while others are still in flight", () => {
    const h = start(fleet(3), { batches: one, concurrency: 1 });
    const order = batchIds(h, 0);
    goOffline(h, order[1]!);
    tick(h);
    goOnline(h, order[1]!);
    bringBack(h, [order[0]!]);
    advance(h, 1000);
    expect(sent(h, "upgrade")).toEqual([order[0], order[1]]);
  });
});

function sentNot(h: Harness): string[] {
  return h.nodes
    .filter((n) => n.state === "waiting" && !["node-000", "node-001"].includes(n.nodeId))
    .map((n) => n.nodeId);
}

describe("judging an offered node", () => {
  type Script = (h: Harness, id: string) => void;
  const cases: { name: string; script: Script; state: NodeState; code?: string }[] = [
    {
      name: "moves to applying on ACCEPTED",
      script: (h, id) => report(h, id, "ACCEPTED"),
      state: "applying",
    },
    {
      name: "moves to applying on VERIFYING (the agent verifying the package)",
      script: (h, id) => report(h, id, "VERIFYING"),
      state: "applying",
    },
    {
      name: "moves to restarting on RESTARTING",
      script: (h, id) => report(h, id, "RESTARTING"),
      state: "restarting",
    },
    {
      name: "moves to verifying when back on the target with a new boot id",
      script: (h, id) => reboot(h, id, NEW),
      state: "verifying",
    },
    {
      name: "does not count the target on the same boot id as success",
      script: (h, id) => h.facts.set(id, { ...h.facts.get(id)!, agentVersion: NEW }),
      state: "offered",
    },
    {
      name: "fails a refusal (rejected)",
      script: (h, id) => report(h, id, "REFUSED"),
      state: "failed",
      code: "rejected",
    },
    {
      name: "fails a reported failure (apply_failed)",
      script: (h, id) => report(h, id, "FAILED"),
      state: "failed",
      code: "apply_failed",
    },
    {
      name: "fails an agent that reinstated itself (reverted)",
      script: (h, id) => report(h, id, "REINSTATED"),
      state: "failed",
      code: "reverted",
    },
    {
      name: "fails a node back on its old version after accepting the upgrade (reverted)",
      script: (h, id) => {
        report(h, id, "ACCEPTED");
        reboot(h, id, OLD);
      },
      state: "failed",
      code: "reverted",
    },
    {
      // Its supervisor reverted it and says why right after the Welcome (revert-report.test.ts).
      name: "waits for the report of a node back on its old version after announcing its restart",
      script: (h, id) => {
        report(h, id, "RESTARTING");
        reboot(h, id, OLD);
      },
      state: "restarting",
    },
    {
      name: "keeps offering a node that restarted on its old version before acknowledging the offer",
      script: (h, id) => reboot(h, id, OLD),
      state: "offered",
    },
    {
      name: "fails an offer the worker could not send (offer_failed)",
      script: (h, id) => sendFails(h, id),
      state: "failed",
      code: "offer_failed",
    },
    {
      name: "times out a node that stopped heartbeating while running (timed_out)",
      script: (h, id) => {
        report(h, id, "DOWNLOADING");
        goOffline(h, id);
        h.now += 10 * MIN;
      },
      state: "timed_out",
      code: "reconnect_timeout",
    },
    {
      name: "fails a node that restarted and did not come back in time (reconnect_timeout)",
      script: (h, id) => {
        report(h, id, "RESTARTING");
        tick(h);
        goOffline(h, id);
        h.now += 10 * MIN;
      },
      state: "failed",
      code: "reconnect_timeout",
    },
    {
      name: "fails a node still heartbeating but not on the target in time (reconnect_timeout)",
      script: (h, id) => {
        report(h, id, "APPLYING");
        h.now += 10 * MIN;
      },
      state: "failed",
      code: "reconnect_timeout",
    },
    {
      name: "keeps a node that is restarting one millisecond before its deadline",
      script: (h, id) => {
        report(h, id, "RESTARTING");
        tick(h);
        goOffline(h, id);
        h.now += 10 * MIN - 1;
      },
      state: "restarting",
    },
  ];
  it.each(cases)("$name", ({ script, state, code }) => {
    const h = start(fleet(1), {
      batches: [{ percent: 100, minDurationMs: 30 * MIN }],
      failureThresholdPercent: 100,
    });
    tick(h);
    script(h, "node-000");
    tick(h);
    expect(nodeOf(h, "node-000").state).toBe(state);
    if (code !== undefined) expect(nodeOf(h, "node-000").code).toBe(code);
    expect(nodeOf(h, "node-000").message ?? "").not.toMatch(/undefined/);
  });

  it("says how long it waited in a reconnect timeout's message", () => {
    const h = start(fleet(1), { batches: one, failureThresholdPercent: 100 });
    tick(h);
    report(h, "node-000", "RESTARTING");
    tick(h);
    advance(h, 10 * MIN);
    expect(nodeOf(h, "node-000").message).toBe(`did not reconnect with ${NEW} within 10 minutes`);
  });
});

describe("config grace and watching", () => {
  const withConfig = (minDurationMs = 0) => {
    const h = start(fleet(1, { capabilities: () => ["upgrade.v1", "config.v1"] }), {
      batches: [{ percent: 100, minDurationMs }],
      failureThresholdPercent: 100,
    });
    tick(h);
    reboot(h, "node-000", NEW);
    tick(h);
    return h;
  };

  it("keeps a config.v1 node verifying until its grace ends, then it succeeds with its batch", () => {
    const h = withConfig();
    expect(nodeOf(h, "node-000")).toMatchObject({ state: "verifying", graceEndsAt: h.now + MIN });
    advance(h, MIN - 1);
    expect(nodeOf(h, "node-000").state).toBe("verifying");
    advance(h, 1);
    expect(nodeOf(h, "node-000").state).toBe("succeeded");
    expect(sent(h, "confirm")).toEqual(["node-000"]);
  });

  it("fails a config failure within the grace (config_apply_failed)", () => {
    const h = withConfig();
    advance(h, 30_000);
    configFails(h, "node-000");
    tick(h);
    expect(nodeOf(h, "node-000")).toMatchObject({ state: "failed", code: "config_apply_failed" });
  });

  it("fails a config failure after the grace while its batch still runs", () => {
    const h = withConfig(30 * MIN);
    advance(h, 5 * MIN);
    expect(nodeOf(h, "node-000").state).toBe("verifying");
    configFails(h, "node-000");
    tick(h);
    expect(nodeOf(h, "node-000")).toMatchObject({ state: "failed", code: "config_apply_failed" });
  });

  it("ignores a config failure from the boot before the upgrade", () => {
    const h = start(fleet(1, { capabilities: () => ["upgrade.v1", "config.v1"] }), {
      batches: one,
    });
    tick(h);
    configFails(h, "node-000");
    reboot(h, "node-000", NEW);
    tick(h);
    advance(h, MIN);
    expect(nodeOf(h, "node-000").state).toBe("succeeded");
  });

  it("gives a node without config.v1 no grace", () => {
    const h = start(fleet(1), { batches: one });
    tick(h);
    setCapabilities(h, "node-000", ["upgrade.v1"]);
    reboot(h, "node-000", NEW);
    tick(h);
    expect(nodeOf(h, "node-000").state).toBe("succeeded");
  });
});

describe("final states and idempotence", () => {
  it("never changes a final state: a timed-out node that comes back later stays timed_out", () => {
    const h = start(fleet(1), { batches: one, failureThresholdPercent: 100 });
    tick(h);
    goOffline(h, "node-000");
    advance(h, 10 * MIN);
    expect(nodeOf(h, "node-000").state).toBe("timed_out");
    reboot(h, "node-000", NEW);
    const d = advance(h, MIN);
    expect(nodeOf(h, "node-000").state).toBe("timed_out");
    expect(d.changes.nodes).toEqual([]);
  });

  it("derives operation ids from campaign, node and kind", () => {
    const h = start(fleet(1), { batches: one });
    tick(h);
    expect(h.actions[0]).toMatchObject({ kind: "upgrade", operationId: "c1/node-000/upgrade" });
  });

  it("decides nothing new when run again on its own result", () => {
    const h = start(fleet(100));
    tick(h);
    const again = decide({
      campaign: h.campaign,
      nodes: h.nodes,
      facts: h.facts,
      now: h.now,
      target: h.target,
    });
    expect(again.actions).toEqual([]);
    expect(again.changes).toEqual({ campaign: undefined, nodes: [] });
  });

  it("gives the same decision for the same input (a crash before persisting re-sends the same ids)", () => {
    const h = start(fleet(100));
    const input = {
      campaign: h.campaign,
      nodes: h.nodes,
      facts: h.facts,
      now: h.now,
      target: h.target,
    };
    expect(decide(input)).toEqual(decide(input));
  });
});
