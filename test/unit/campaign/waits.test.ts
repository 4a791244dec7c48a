/**
 * What the current batch waits for (`waitsFor` + `formatWait`): each row drives the pure engine
 * to a situation with the harness, then compares the operator's sentences with the ones a
 * person derives from that situation by hand.
 */
import { describe, expect, it } from "vitest";
import {
  type CampaignSpecInput,
  formatWait,
  type GateResult,
  type ObservedPhase,
  type PauseInfo,
  type PoolLoad,
  parseGate,
  waitsFor,
} from "../../../control/campaign/index.js";
import {
  advance,
  bringBack,
  fleet,
  goReconnecting,
  type Harness,
  inState,
  MIN,
  report,
  start,
  tick,
} from "./harness.js";
import { windowsOf } from "./windows-of.js";

const S = 1000;
const gate = (text: string) => {
  const g = parseGate(text);
  if (!g.ok) throw new Error(g.message);
  return g.gate;
};
const P99 = gate("prometheus http://prom:9090 p99_latency < 0.25");

/** One batch of the whole fleet, lasting at least `minDurationMs`. */
const oneBatch = (minDurationMs: number) => [{ percent: 100, minDurationMs }];

/**
 * One node, offered at t=0 and back on the target at once, with no config grace: the first
 * batch has settled (its nodes succeeded) at t=0.
 */
function settled(spec: Partial<CampaignSpecInput>): Harness {
  const h = start(fleet(1), { configGraceMs: 0, ...spec });
  tick(h);
  bringBack(h, inState(h, "offered"));
  tick(h);
  return h;
}

interface Row {
  readonly name: string;
  /** Drives the harness; returns what else the explanation reads. */
  readonly drive: () => {
    h: Harness;
    gates?: GateResult[];
    pools?: Map<string, PoolLoad>;
    pause?: PauseInfo;
  };
  readonly expected: readonly string[];
}

const rows: Row[] = [
  {
    name: "a node that deferred is counted with the time until it is offered again",
    drive: () => {
      const h = start(fleet(1), { batches: [{ percent: 100, minDurationMs: 0 }] });
      tick(h);
      report(h, "node-000", "DEFERRED", "upgrade", { message: "backup running" });
      tick(h);
      h.now += 20 * S;
      return { h };
    },
    expected: [
      "1 node deferred (busy), offered again in 40 s at the soonest, skipped once past max defer",
    ],
  },
  {
    name: "a full download budget holds the waiting nodes and says how many are downloading",
    drive: () => {
      const h = start(fleet(3), {
        maxDownloads: 1,
        disruptionBudgetPercent: 100,
        batches: oneBatch(0),
      });
      tick(h);
      report(h, inState(h, "offered")[0] as string, "DOWNLOADING");
      return { h };
    },
    expected: [
      "1 node upgrading, reconnect timeout 10 min left",
      "download budget: 1 of 1 downloading (max downloads)",
    ],
  },
  {
    name: "a node past its download frees the download budget: the others are to offer",
    drive: () => {
      const h = start(fleet(3), {
        maxDownloads: 1,
        disruptionBudgetPercent: 100,
        batches: oneBatch(0),
      });
      tick(h);
      report(h, inState(h, "offered")[0] as string, "VERIFYING");
      return { h };
    },
    expected: [
      "1 node upgrading, reconnect timeout 10 min left",
      "2 nodes to offer at the next decision",
    ],
  },
  {
    name: "a settled batch 18 minutes into its 30 waits 12 minutes",
    drive: () => {
      const h = settled({
        batches: oneBatch(30 * MIN),
      });
      h.now = 18 * MIN;
      return { h };
    },
    expected: ["minimum duration: 12 min left"],
  },
  {
    name: "a campaign started outside its window says when the window opens, in its zone",
    drive: () => {
      // t=0 is Thursday 1970-01-01 01:00 in Berlin.
      const h = start(fleet(2), {
        windows: windowsOf("Mon 02:00-04:00 Europe/Berlin"),
        batches: oneBatch(30 * MIN),
      });
      tick(h);
      return { h };
    },
    expected: ["window closed: opens Mon 02:00 Europe/Berlin", "minimum duration: 30 min left"],
  },
  {
    name: "a gate unreachable for 20 s of its 60 s grace is shown with its last value",
    drive: () => {
      const h = settled({
        batches: oneBatch(0),
        gates: [P99],
        gateGraceMs: 60 * S,
      });
      h.now = 30 * S;
      const gates: GateResult[] = [
        {
          batch: 0,
          gate: 0,
          status: "unreachable",
          at: 30 * S,
          value: "HTTP 503",
          message: "Prometheus answered 503",
          unreachableSince: 10 * S,
        },
      ];
      return { h, gates };
    },
    expected: [
      "gate 1 (prometheus p99_latency) unreachable for 20 s of its 60 s grace (value HTTP 503)",
    ],
  },
  {
    name: "a settled batch with a gate not yet evaluated waits for its first result",
    drive: () => {
      const h = settled({
        batches: oneBatch(0),
        gates: [P99],
      });
      return { h };
    },
    expected: ["gate 1 (prometheus p99_latency): no result since the batch settled yet"],
  },
  {
    name: "a pool whose budget other campaigns hold offers nothing and names the pool",
    drive: () => {
      const h = start(fleet(4, { pool: () => "db" }), {
        batches: oneBatch(0),
      });
      const pools = new Map([["db", { size: 100, inFlightElsewhere: 5 }]]);
      tick(h, [], { pools });
      return { h, pools };
    },
    expected: ["pool budget: 5 of 5 in flight in pool db"],
  },
  {
    name: "nodes back on the target within their config grace count down the grace",
    drive: () => {
      const h = start(fleet(3, { capabilities: () => ["upgrade.v1", "config.v1"] }), {
        configGraceMs: 60 * S,
        disruptionBudgetPercent: 100,
        batches: oneBatch(0),
      });
      tick(h);
      h.now = 20 * S;
      bringBack(h, inState(h, "offered"));
      tick(h);
      h.now = 40 * S;
      return { h };
    },
    expected: ["3 nodes verifying, config grace 40 s left"],
  },
  {
    name: "offered nodes count down the reconnect timeout of the last one offered",
    drive: () => {
      const h = start(fleet(2), {
        disruptionBudgetPercent: 100,
        reconnectTimeoutMs: 10 * MIN,
        batches: oneBatch(0),
      });
      tick(h);
      h.now = 4 * MIN;
      return { h };
    },
    expected: ["2 nodes upgrading, reconnect timeout 6 min left"],
  },
  {
    name: "a full concurrency holds the waiting nodes",
    drive: () => {
      const h = start(fleet(4), {
        concurrency: 1,
        disruptionBudgetPercent: 100,
        batches: oneBatch(0),
      });
      tick(h);
      return { h };
    },
    expected: ["1 node upgrading, reconnect timeout 10 min left", "concurrency: 1 of 1 in flight"],
  },
  {
    name: "a waiting node without a stream is waited for, not offered",
    drive: () => {
      const h = start(fleet(2), {
        disruptionBudgetPercent: 100,
        batches: oneBatch(0),
      });
      goReconnecting(h, "node-000");
      goReconnecting(h, "node-001");
      tick(h);
      return { h };
    },
    expected: ["2 nodes to offer not connected (offered when back, skipped once offline)"],
  },
  {
    name: "a paused campaign names who paused it, when and why, before the batch's own waits",
    drive: () => {
      const h = settled({
        batches: oneBatch(30 * MIN),
      });
      h.now = 2 * 60 * MIN + 10 * MIN;
      tick(h, [{ kind: "pause", reason: "change freeze" }]);
      return { h, pause: { by: "alice", at: h.now, reason: "change freeze" } };
    },
    expected: ["paused by alice at Thu 02:10 UTC: change freeze"],
  },
  {
    name: "a settled batch soaking counts down its soak",
    drive: () => {
      const h = settled({
        soakMs: 10 * MIN,
        batches: oneBatch(0),
      });
      h.now = 4 * MIN;
      return { h };
    },
    expected: ["soak: 6 min left"],
  },
  {
    name: "a completed campaign waits for nothing",
    drive: () => {
      const h = start(fleet(1), {
        configGraceMs: 0,
        batches: oneBatch(0),
      });
      tick(h);
      bringBack(h, inState(h, "offered"));
      advance(h, S);
      return { h };
    },
    expected: ["nothing: the campaign has ended completed"],
  },
];

describe("what the current batch waits for", () => {
  it.each(rows)("$name", (row) => {
    const { h, gates, pools, pause } = row.drive();
    const upgradePhases = new Map<string, ObservedPhase>();
    for (const f of h.facts.values())
      for (const r of f.reports) upgradePhases.set(r.operationId, r.phase);
    const waits = waitsFor({
      campaign: h.campaign,
      nodes: h.nodes,
      now: h.now,
      online: (id) => h.facts.get(id)?.online ?? false,
      gates,
      pools,
      pause,
      upgradePhases,
    });
    expect(waits.map(formatWait)).toEqual(row.expected);
  });

  it("a batch whose every wait is over says it passes at the next decision, and the next decision passes it", () => {
    const h = settled({
      batches: [
        { percent: 50, minDurationMs: 10 * MIN },
        { percent: 100, minDurationMs: 0 },
      ],
    });
    h.now = 10 * MIN;
    const waits = waitsFor({ campaign: h.campaign, nodes: h.nodes, now: h.now });
    expect(waits.map(formatWait)).toEqual(["nothing: the batch passes at the next decision"]);
    tick(h);
    expect(h.campaign.batches[0]?.state).toBe("passed");
  });
});
