/**
 * The failure budget and the minimum sample before a campaign runs: `--max-failures` as text,
 * the spec's ranges, the first batch widened to hold min canaries, and the admission refusals
 * (too few canaries, a yanked target), judged against hand-counted expectations.
 */
import { describe, expect, it } from "vitest";
import {
  type AdmissionCandidate,
  type AdmissionInput,
  admit,
  type CampaignSpecInput,
  DEFAULT_POLICY,
  exceedsBudget,
  type FailureBudget,
  FIXED_ORDER_SECRET,
  formatFailureBudget,
  parseFailureBudget,
  planCampaign,
  refusalMessage,
  resolveSpec,
  validateSpec,
} from "../../../control/campaign/index.js";

const MIN = 60_000;
const NOW = Date.UTC(2031, 0, 1);
const POLICY = { ...DEFAULT_POLICY, minBatchDurationMs: MIN };

function node(i: number, over: Partial<AdmissionCandidate> = {}): AdmissionCandidate {
  return {
    id: `n${String(i).padStart(3, "0")}`,
    labels: {},
    pool: "",
    enabled: true,
    everConnected: true,
    capabilities: ["upgrade.v1"],
    agentVersion: "1.0.0",
    platform: "linux-amd64",
    confirmedSequence: 1,
    ...over,
  };
}

const fleet = (n: number, over: (i: number) => Partial<AdmissionCandidate> = () => ({})) =>
  Array.from({ length: n }, (_, i) => node(i, over(i)));

function spec(over: Partial<CampaignSpecInput>) {
  return resolveSpec(
    {
      targetVersion: "2.0.0",
      batches: [5, 100].map((percent) => ({ percent, minDurationMs: MIN })),
      ...over,
    },
    POLICY,
  );
}

function input(
  over: Partial<CampaignSpecInput>,
  candidates: readonly AdmissionCandidate[],
  extra: Partial<AdmissionInput> = {},
): AdmissionInput {
  return {
    intent: "start",
    origin: "operator",
    spec: spec(over),
    rules: { policy: POLICY, maxVersion: undefined },
    release: { version: "2.0.0", sequence: 20, expiresAt: NOW + 3_600_000, platforms: undefined },
    candidates,
    busy: new Map(),
    now: NOW,
    orderSecret: FIXED_ORDER_SECRET,
    ...extra,
  };
}

describe("--max-failures as text", () => {
  it.each<[string, FailureBudget]>([
    ["0", { kind: "count", count: 0 }],
    ["10", { kind: "count", count: 10 }],
    ["2%", { kind: "percent", percent: 2 }],
    [" 100% ", { kind: "percent", percent: 100 }],
  ])("reads %j", (text, budget) => {
    expect(parseFailureBudget(text)).toEqual({ ok: true, value: budget });
    expect(parseFailureBudget(formatFailureBudget(budget))).toEqual({ ok: true, value: budget });
  });

  it.each([
    ["101%", /above 100 %/],
    ["-1", /not a failure budget/],
    ["2.5%", /not a failure budget/],
    ["ten", /not a failure budget/],
    ["", /not a failure budget/],
  ])("refuses %j with a sentence", (text, message) => {
    const parsed = parseFailureBudget(text);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.message).toMatch(message);
  });
});

describe("exceeding the budget (strictly more than allowed, beyond accepted failures)", () => {
  it.each<[string, number, number, FailureBudget, number, boolean]>([
    ["2 of 100 at 2 %", 2, 100, { kind: "percent", percent: 2 }, 0, false],
    ["3 of 100 at 2 %", 3, 100, { kind: "percent", percent: 2 }, 0, true],
    ["1 of 49 at 2 % (floor: 0 allowed)", 1, 49, { kind: "percent", percent: 2 }, 0, true],
    ["3 at a count of 3", 3, 1000, { kind: "count", count: 3 }, 0, false],
    ["4 at a count of 3", 4, 1000, { kind: "count", count: 3 }, 0, true],
    ["4 at a count of 3 with 4 accepted", 4, 1000, { kind: "count", count: 3 }, 4, false],
    ["5 at a count of 3 with 4 accepted", 5, 1000, { kind: "count", count: 3 }, 4, true],
  ])("%s", (_, failed, offerable, budget, accepted, expected) => {
    expect(exceedsBudget({ failed, offerable }, budget, accepted)).toBe(expected);
  });
});

describe("the spec's ranges", () => {
  it.each<[string, Partial<CampaignSpecInput>, string | undefined]>([
    ["a count of 0", { maxFailures: { kind: "count", count: 0 } }, undefined],
    ["a negative count", { maxFailures: { kind: "count", count: -1 } }, "max_failures"],
    ["a fractional count", { maxFailures: { kind: "count", count: 1.5 } }, "max_failures"],
    ["101 %", { maxFailures: { kind: "percent", percent: 101 } }, "max_failures"],
    ["min canaries 1", { minCanaries: 1 }, undefined],
    ["min canaries -2", { minCanaries: -2 }, "min_canaries"],
    ["min canaries 2.5", { minCanaries: 2.5 }, "min_canaries"],
  ])("%s", (_, over, field) => {
    const violations = validateSpec(spec(over), POLICY);
    expect(violations.map((v) => v.field)).toEqual(field === undefined ? [] : [field]);
  });

  it("min canaries 0 means none", () => {
    expect(spec({ minCanaries: 0 }).minCanaries).toBeUndefined();
  });
});

describe("the first batch holds min canaries nodes to upgrade", () => {
  it("widens a 5 % canary batch of 40 nodes (2 nodes) to 6", () => {
    const plan = planCampaign(spec({ minCanaries: 6 }), fleet(40), 5);
    expect(plan.batches.map((b) => b.nodeIds.length)).toEqual([6, 34]);
  });

  it("keeps a canary batch that already holds enough", () => {
    const plan = planCampaign(spec({ minCanaries: 2 }), fleet(100), 5);
    expect(plan.batches.map((b) => b.nodeIds.length)).toEqual([5, 95]);
  });

  it("counts only nodes that would be offered: past nodes on the target or without upgrade.v1", () => {
    const candidates = fleet(40, (i) =>
      i % 2 === 0 ? { agentVersion: "2.0.0" } : i % 3 === 0 ? { capabilities: [] } : {},
    );
    const plan = planCampaign(spec({ minCanaries: 5 }), candidates, 5);
    const first = new Set(plan.batches[0]?.nodeIds);
    const offered = candidates.filter(
      (c) => first.has(c.id) && c.agentVersion !== "2.0.0" && c.capabilities.length > 0,
    );
    expect(offered).toHaveLength(5);
    // The batch ends right after the fifth: its last node is one to upgrade.
    const last = candidates.find((c) => c.id === plan.batches[0]?.nodeIds.at(-1));
    expect(last?.agentVersion).toBe("1.0.0");
    expect(last?.capabilities).toEqual(["upgrade.v1"]);
  });

  it("widens a ramp's first step too, and later steps start after it", () => {
    const plan = planCampaign(
      spec({ batches: [], ramp: { startPerMinute: 1, factor: 2, stepMs: MIN } }),
      fleet(40),
      5,
    );
    const widened = planCampaign(
      spec({ batches: [], ramp: { startPerMinute: 1, factor: 2, stepMs: MIN }, minCanaries: 4 }),
      fleet(40),
      5,
    );
    expect(plan.batches[0]?.nodeIds).toHaveLength(1);
    expect(widened.batches[0]?.nodeIds).toHaveLength(4);
    expect(widened.nodes).toHaveLength(40);
    expect(new Set(widened.nodes.map((n) => n.nodeId)).size).toBe(40);
  });
});

describe("admission with min canaries and a yanked target", () => {
  it("refuses a start when fewer nodes can be upgraded than min canaries asks", () => {
    const candidates = fleet(5, (i) => (i < 3 ? { agentVersion: "2.0.0" } : {}));
    const a = admit(input({ minCanaries: 3 }, candidates));
    expect(a.ok).toBe(false);
    if (a.ok) return;
    expect(a.refusal).toEqual({
      kind: "too_few_canaries",
      minCanaries: 3,
      upgradable: 2,
      totalNodes: 5,
    });
    expect(refusalMessage(a.refusal)).toBe(
      "min canaries asks for 3 node(s) the first batch can upgrade, and the campaign has 2 (of 5 selected; the others are already on the target, lack upgrade.v1, run a platform the release lacks or confirmed a higher sequence)",
    );
  });

  it("refuses a plan the same way", () => {
    const a = admit(input({ minCanaries: 6 }, fleet(5), { intent: "plan" }));
    expect(a.ok ? undefined : a.refusal.kind).toBe("too_few_canaries");
  });

  it("admits exactly min canaries nodes to upgrade, all in the first batch", () => {
    const a = admit(input({ minCanaries: 5 }, fleet(5)));
    expect(a.ok).toBe(true);
    if (a.ok) expect(a.plan.batches[0]?.nodeIds).toHaveLength(5);
  });

  it("refuses a yanked target before anything else about the release", () => {
    const a = admit(
      input({}, fleet(5), {
        release: {
          version: "2.0.0",
          sequence: 20,
          expiresAt: NOW - 1,
          platforms: undefined,
          yanked: { reason: "corrupts the cache" },
        },
      }),
    );
    expect(a.ok ? undefined : a.refusal).toEqual({
      kind: "release_yanked",
      version: "2.0.0",
      reason: "corrupts the cache",
    });
    if (!a.ok)
      expect(refusalMessage(a.refusal)).toMatch(
        /^release 2\.0\.0 was yanked \(corrupts the cache\)/,
      );
  });
});
