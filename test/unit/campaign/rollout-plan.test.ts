import { describe, expect, it } from "vitest";
import {
  abortPlan,
  applyPlanStep,
  createPlan,
  type GroupCampaign,
  groupCampaignSpec,
  nextPlanStep,
  planGroupStarted,
  planViolations,
  planViolationsOf,
  type RolloutPlan,
  resolveSpec,
} from "../../../control/campaign/index.js";

const WAIT = 60_000;

function plan(): RolloutPlan {
  return createPlan({
    id: "p1",
    template: resolveSpec({ targetVersion: "2.0.0", reason: "spring" }),
    groups: ["dev", "staging", "prod"].map((pool) => ({
      name: pool,
      selector: { labels: {}, pools: [pool], nodeIds: [] },
    })),
    waitMs: WAIT,
    now: 0,
    createdBy: "alice",
  });
}

/** The plan with group 1 completed at 1000 (its campaign p1-g1). */
function afterFirst(): RolloutPlan {
  const started = planGroupStarted(plan(), 0, { campaignId: "p1-g1" }, 0);
  return applyPlanStep(started, { kind: "group_completed", group: 0, at: 1000 }, 1000);
}

const completed: GroupCampaign = { phase: "completed", finishedAt: 1000 };

describe("what a plan does next", () => {
  const cases: {
    name: string;
    plan: () => RolloutPlan;
    campaigns: [string, GroupCampaign][];
    now: number;
    expected: unknown;
  }[] = [
    {
      name: "a new plan starts its first group at once",
      plan,
      campaigns: [],
      now: 0,
      expected: { kind: "start_group", group: 0 },
    },
    {
      name: "a group whose campaign runs makes the plan wait for it",
      plan: () => planGroupStarted(plan(), 0, { campaignId: "p1-g1" }, 0),
      campaigns: [["p1-g1", { phase: "running", finishedAt: undefined }]],
      now: 500,
      expected: { kind: "none" },
    },
    {
      name: "a group whose campaign completed but has not finished every node is not done yet",
      plan: () => planGroupStarted(plan(), 0, { campaignId: "p1-g1" }, 0),
      campaigns: [["p1-g1", { phase: "completed", finishedAt: undefined }]],
      now: 500,
      expected: { kind: "none" },
    },
    {
      name: "a group whose campaign finished completed is done",
      plan: () => planGroupStarted(plan(), 0, { campaignId: "p1-g1" }, 0),
      campaigns: [["p1-g1", completed]],
      now: 1000,
      expected: { kind: "group_completed", group: 0, at: 1000 },
    },
    {
      name: "the next group never starts before the wait after the previous one elapsed",
      plan: afterFirst,
      campaigns: [["p1-g1", completed]],
      now: 1000 + WAIT - 1,
      expected: { kind: "wait", until: 1000 + WAIT },
    },
    {
      name: "the next group starts once the wait elapsed",
      plan: afterFirst,
      campaigns: [["p1-g1", completed]],
      now: 1000 + WAIT,
      expected: { kind: "start_group", group: 1 },
    },
    {
      name: "a group whose campaign rolls back halts the plan at once",
      plan: () => planGroupStarted(plan(), 0, { campaignId: "p1-g1" }, 0),
      campaigns: [["p1-g1", { phase: "rolling_back", finishedAt: undefined }]],
      now: 500,
      expected: {
        kind: "halt",
        group: 0,
        message: 'group "dev" breached: campaign p1-g1 is rolling_back',
      },
    },
    {
      name: "a group whose campaign was aborted halts the plan",
      plan: () => planGroupStarted(plan(), 0, { campaignId: "p1-g1" }, 0),
      campaigns: [["p1-g1", { phase: "aborted", finishedAt: 700 }]],
      now: 800,
      expected: {
        kind: "halt",
        group: 0,
        message: 'group "dev" breached: campaign p1-g1 is aborted',
      },
    },
    {
      name: "a group paused on a breach holds the plan for the operator's answer",
      plan: () => planGroupStarted(plan(), 0, { campaignId: "p1-g1" }, 0),
      campaigns: [["p1-g1", { phase: "paused", finishedAt: undefined }]],
      now: 800,
      expected: { kind: "none" },
    },
    {
      name: "an aborted plan does nothing more",
      plan: () => abortPlan(afterFirst(), "change freeze", 2000),
      campaigns: [["p1-g1", completed]],
      now: 1000 + WAIT,
      expected: { kind: "none" },
    },
  ];
  it.each(cases)("$name", (c) => {
    expect(nextPlanStep(c.plan(), new Map(c.campaigns), c.now)).toEqual(c.expected);
  });
});

describe("how a plan's records change", () => {
  it("a halted plan names its breached group and keeps the later groups unstarted", () => {
    const started = planGroupStarted(plan(), 0, { campaignId: "p1-g1" }, 0);
    const halted = applyPlanStep(started, { kind: "halt", group: 0, message: "breached" }, 500);
    expect(halted.phase).toBe("halted");
    expect(halted.groups.map((g) => g.outcome)).toEqual(["breached", undefined, undefined]);
    expect(planViolationsOf(halted, new Map([["p1-g1", 0]]))).toEqual([]);
  });

  it("the last group's completion completes the plan", () => {
    let p = afterFirst();
    p = planGroupStarted(p, 1, { campaignId: "p1-g2" }, 1000 + WAIT);
    p = applyPlanStep(p, { kind: "group_completed", group: 1, at: 70_000 }, 70_000);
    p = planGroupStarted(p, 2, { empty: "nothing to upgrade" }, 70_000 + WAIT);
    expect(p.phase).toBe("completed");
    expect(p.groups.map((g) => g.outcome)).toEqual(["completed", "completed", "empty"]);
  });

  it("a group's campaign takes the template with the group's selector and says which group it is", () => {
    const spec = groupCampaignSpec(plan(), 2);
    expect(spec.selector.pools).toEqual(["prod"]);
    expect(spec.targetVersion).toBe("2.0.0");
    expect(spec.reason).toBe("spring: plan p1, group 3 of 3 (prod)");
  });

  it("the invariant check finds a group started before the wait after the previous one", () => {
    let p = afterFirst();
    p = planGroupStarted(p, 1, { campaignId: "p1-g2" }, 1000);
    expect(planViolationsOf(p, new Map([["p1-g2", 1000]]))).toEqual([
      "P1: plan p1 started group 2 at 1000, before group 1 ended (1000) + the wait (60000 ms)",
    ]);
  });

  it("the invariant check finds a group started while the previous one had not completed", () => {
    let p = planGroupStarted(plan(), 0, { campaignId: "p1-g1" }, 0);
    p = planGroupStarted(p, 1, { campaignId: "p1-g2" }, 10);
    expect(planViolationsOf(p, new Map())).toEqual([
      "P1: plan p1 started group 2 while group 1 is unfinished",
    ]);
  });
});

describe("which plans are refused", () => {
  const group = (name: string, pools: string[] = [name]) => ({
    name,
    selector: { labels: {}, pools, nodeIds: [] },
  });
  const cases: [string, ReturnType<typeof group>[], number, string[]][] = [
    ["a plan of named groups with a wait is accepted", [group("dev"), group("prod")], 0, []],
    ["a plan without groups is refused", [], 0, ["a plan needs at least one group"]],
    [
      "a group name used twice is refused",
      [group("dev"), group("dev")],
      0,
      ['group name "dev" is used twice'],
    ],
    [
      "a group that selects every node is refused",
      [group("all", [])],
      0,
      ['group "all" selects every node: give it a pool, labels or nodes'],
    ],
    [
      "a negative wait is refused",
      [group("dev")],
      -1,
      ["the wait between groups must be a whole number of ms ≥ 0, not -1"],
    ],
  ];
  it.each(cases)("%s", (_name, groups, wait, expected) => {
    expect(planViolations(groups, wait)).toEqual(expected);
  });
});
