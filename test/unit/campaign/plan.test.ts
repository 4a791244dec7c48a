import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { BatchSpec, CampaignSpecInput, Candidate } from "../../../control/campaign/index.js";
import {
  batchBounds,
  canaryOrder,
  DEFAULT_POLICY,
  FIXED_ORDER_SECRET,
  orderKey,
  planCampaign,
  resolveSpec,
  validateSpec,
} from "../../../control/campaign/index.js";
import { fleet, MIN, NEW, referenceOrderKey } from "./harness.js";

const spec = (input: Partial<CampaignSpecInput> = {}) =>
  resolveSpec({ targetVersion: NEW, ...input });
const b = (percent: number, minutes = 30): BatchSpec => ({ percent, minDurationMs: minutes * MIN });

describe("canary order", () => {
  it("orders nodes by the HMAC-SHA-256 of their id under the fleet's secret", () => {
    const nodes = fleet(50);
    const secret = "a fleet's secret";
    const ordered = canaryOrder(nodes, secret).map((n) => n.id);
    const expected = [...nodes]
      .map((n) => ({ id: n.id, h: referenceOrderKey(n.id, secret) }))
      .sort((x, y) => (x.h < y.h ? -1 : 1))
      .map((x) => x.id);
    expect(ordered).toEqual(expected);
    expect(orderKey("node-000", secret)).toBe(referenceOrderKey("node-000", secret));
    expect(orderKey("node-000", FIXED_ORDER_SECRET)).toBe(
      referenceOrderKey("node-000", FIXED_ORDER_SECRET),
    );
  });

  it("is not the public SHA-256 order, and another secret gives another order", () => {
    const nodes = fleet(50);
    const bySha = [...nodes]
      .sort((x, y) =>
        createHash("sha256").update(x.id).digest("hex") <
        createHash("sha256").update(y.id).digest("hex")
          ? -1
          : 1,
      )
      .map((n) => n.id);
    const a = canaryOrder(nodes, "secret a").map((n) => n.id);
    const b = canaryOrder(nodes, "secret b").map((n) => n.id);
    expect(a).not.toEqual(bySha);
    expect(a).not.toEqual(b);
    expect(canaryOrder(nodes, "secret a").map((n) => n.id)).toEqual(a);
  });

  it("puts nodes labelled canary=true first, each group in keyed order", () => {
    const nodes = fleet(20, { labels: (i) => (i % 7 === 3 ? { canary: "true" } : {}) });
    const ordered = canaryOrder(nodes, FIXED_ORDER_SECRET);
    expect(ordered.slice(0, 3).map((n) => n.labels.canary)).toEqual(["true", "true", "true"]);
    expect(ordered.slice(3).every((n) => n.labels.canary === undefined)).toBe(true);
    const keys = ordered.slice(3).map((n) => referenceOrderKey(n.id, FIXED_ORDER_SECRET));
    expect(keys).toEqual([...keys].sort());
  });

  it("gives the same order whatever the input order", () => {
    const nodes = fleet(30);
    expect(canaryOrder([...nodes].reverse(), "s")).toEqual(canaryOrder(nodes, "s"));
  });
});

describe("batch bounds", () => {
  it.each([
    { total: 100, percents: [5, 25, 100], bounds: [5, 25, 100] },
    { total: 10, percents: [5, 25, 100], bounds: [1, 3, 10] },
    { total: 1, percents: [5, 25, 100], bounds: [1, 1, 1] },
    { total: 3, percents: [5, 25, 100], bounds: [1, 1, 3] },
    { total: 0, percents: [5, 25, 100], bounds: [0, 0, 0] },
    { total: 41, percents: [1, 50, 100], bounds: [1, 21, 41] },
  ])(
    "rounds cumulative shares up: $total nodes at $percents → $bounds",
    ({ total, percents, bounds }) => {
      expect(
        batchBounds(
          total,
          percents.map((p) => b(p)),
        ),
      ).toEqual(bounds);
    },
  );
});

describe("planCampaign", () => {
  it("splits 100 nodes 5/20/75 in canary order with defaults", () => {
    const plan = planCampaign(spec(), fleet(100));
    expect(plan.batches.map((x) => x.nodeIds.length)).toEqual([5, 20, 75]);
    expect(plan.batches.flatMap((x) => x.nodeIds)).toEqual(
      canaryOrder(fleet(100), FIXED_ORDER_SECRET).map((n) => n.id),
    );
    expect(plan.batches.map((x) => x.minDurationMs)).toEqual([30 * MIN, 30 * MIN, 30 * MIN]);
    expect(plan.nodes.map((n) => n.order)).toEqual([...Array(100).keys()]);
  });

  it("keeps an empty batch when rounding makes two cumulative counts equal", () => {
    const plan = planCampaign(spec(), fleet(3));
    expect(plan.batches.map((x) => x.nodeIds.length)).toEqual([1, 0, 2]);
  });

  it("selects by labels (AND), pools and node ids, and only enabled, ever-connected nodes", () => {
    const nodes: Candidate[] = fleet(18, {
      labels: (i) => ({ site: i % 2 === 0 ? "a" : "b", tier: i % 3 === 0 ? "web" : "db" }),
      pool: (i) => (i < 9 ? "p1" : "p2"),
    }).map((c, i) => ({ ...c, enabled: i !== 0, everConnected: i !== 7 }));
    const ids = (input: Partial<CampaignSpecInput>) =>
      planCampaign(spec(input), nodes)
        .nodes.map((n) => n.nodeId)
        .sort();
    // site=a AND tier=web: 0, 6, 12; node-000 is disabled.
    expect(ids({ selector: { labels: { site: "a", tier: "web" } } })).toEqual([
      "node-006",
      "node-012",
    ]);
    // pool p1: 0..8 minus disabled 0 and never-connected 7.
    expect(ids({ selector: { pools: ["p1"] } })).toHaveLength(7);
    expect(ids({ selector: { nodeIds: ["node-001", "node-002", "node-007"] } })).toEqual([
      "node-001",
      "node-002",
    ]);
    expect(ids({ selector: { pools: ["p2"], labels: { tier: "web" } } })).toEqual([
      "node-009",
      "node-012",
      "node-015",
    ]);
  });

  it("excludes node ids and nodes carrying any excluded tag", () => {
    const nodes = fleet(6, {
      labels: (i) => (i === 2 ? { hold: "yes" } : i === 3 ? { env: "prod" } : {}),
    });
    const plan = planCampaign(
      spec({ exclude: { nodeIds: ["node-000"], tags: { hold: "yes", env: "prod" } } }),
      nodes,
    );
    expect([...plan.nodes.map((n) => n.nodeId)].sort()).toEqual([
      "node-001",
      "node-004",
      "node-005",
    ]);
  });

  it("lists nodes without upgrade.v1 and nodes already on the target apart, keeping their place", () => {
    const nodes = fleet(5, {
      capabilities: (i) => (i === 1 ? [] : ["upgrade.v1"]),
      version: (i) => (i === 2 ? NEW : "1.0.0"),
    });
    const plan = planCampaign(spec(), nodes);
    expect(plan.unsupportedNodeIds).toEqual(["node-001"]);
    expect(plan.upToDateNodeIds).toEqual(["node-002"]);
    expect(plan.upgradableCount).toBe(3);
    expect(plan.totalNodes).toBe(5);
  });
});

describe("resolveSpec", () => {
  it("fills the defaults: 5/25/100 × 30 min, 5 %, concurrency 0, rollback, 10 min, 1 min, no soak, 5 % budget", () => {
    const s = spec();
    expect(s.batches).toEqual([b(5), b(25), b(100)]);
    expect(s.failureThresholdPercent).toBe(5);
    expect(s.concurrency).toBe(0);
    expect(s.onBreach).toBe("rollback");
    expect(s.reconnectTimeoutMs).toBe(10 * MIN);
    expect(s.configGraceMs).toBe(MIN);
    expect(s.soakMs).toBe(0);
    expect(s.disruptionBudgetPercent).toBe(5);
  });

  it("takes the batch duration default from the policy", () => {
    expect(
      resolveSpec({ targetVersion: NEW }, { ...DEFAULT_POLICY, minBatchDurationMs: MIN })
        .batches[0],
    ).toEqual(b(5, 1));
  });

  it("keeps an explicit threshold of 0", () => {
    expect(spec({ failureThresholdPercent: 0 }).failureThresholdPercent).toBe(0);
  });
});

describe("validateSpec", () => {
  const fields = (batches: BatchSpec[], extra: Partial<CampaignSpecInput> = {}) =>
    validateSpec(spec({ batches, ...extra })).map((v) => v.message);

  it("accepts the defaults", () => {
    expect(validateSpec(spec())).toEqual([]);
  });

  it.each([
    {
      name: "more batches than the policy allows",
      batches: [1, 2, 3, 4, 5, 10, 20, 30, 40, 50, 100].map((p) => b(p)),
      message: /1 to 10 batches, not 11/,
    },
    {
      name: "percentages that do not strictly increase",
      batches: [b(5), b(5), b(100)],
      message: /strictly increase \(5 then 5\)/,
    },
    {
      name: "a last batch below 100",
      batches: [b(5), b(50)],
      message: /last batch must be 100 %, not 50 %/,
    },
    {
      name: "a first batch above 5 %",
      batches: [b(10), b(100)],
      message: /first \(canary\) batch is at most 5 %, not 10 %/,
    },
    {
      name: "a batch shorter than the policy minimum",
      batches: [b(5), b(100, 29)],
      message: /batch 2: lasts at least 30 min, not 29 min/,
    },
    {
      name: "a percent outside 1..100",
      batches: [b(0), b(100)],
      message: /batch 1: percent must be an integer from 1 to 100, not 0/,
    },
  ])("reports $name", ({ batches, message }) => {
    expect(fields(batches).some((m) => message.test(m))).toBe(true);
  });

  it("reports no batch at all", () => {
    expect(validateSpec({ ...spec(), batches: [] }).map((v) => v.message)).toContain(
      "a campaign has 1 to 10 batches, not 0",
    );
  });

  it("reports every violation at once", () => {
    const messages = fields([b(10, 1), b(8), b(50)], {
      concurrency: -1,
      failureThresholdPercent: 101,
    });
    expect(messages.length).toBeGreaterThanOrEqual(6);
  });

  it("reports a missing target version", () => {
    expect(validateSpec(resolveSpec({ targetVersion: "" })).map((v) => v.field)).toEqual([
      "target_version",
    ]);
  });
});
