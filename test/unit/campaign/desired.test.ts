import { describe, expect, it } from "vitest";
import {
  type ConvergenceRun,
  convergenceCampaignId,
  convergenceSpec,
  type DesiredVersion,
  desiredIdOf,
  desiredOfCampaign,
  type FleetNode,
  governingDesired,
  isConvergenceCampaignId,
  notBehindReason,
  planConvergence,
  replacesDesired,
  resolveSpec,
} from "../../../control/campaign/index.js";
import { desiredOver, fleetNode as node, T2 } from "./fleet-fixture.js";

/** The desired version of 2.0.0 over pool prod. */
const desired = (over: Partial<DesiredVersion> = {}) => desiredOver(["prod"], over);

function run(d: DesiredVersion, n: number, over: Partial<ConvergenceRun> = {}): ConvergenceRun {
  return {
    campaignId: `${d.id}-${n}`,
    desiredId: d.id,
    createdAt: 2000 + n,
    finished: true,
    failedNodeIds: [],
    ...over,
  };
}

describe("whether a node is behind its desired version", () => {
  const cases: [string, Partial<FleetNode>, string | undefined][] = [
    ["a node on an older version with a lower confirmed sequence is behind", {}, undefined],
    ["a node on the target is not behind", { agentVersion: "2.0.0" }, "on the target"],
    [
      "a node that confirmed the target's sequence is never moved back",
      { agentVersion: "3.0.0", confirmedSequence: 2 },
      "confirmed sequence 2 is not below 2",
    ],
    [
      "a node that confirmed a higher sequence is never moved back past it",
      { agentVersion: "3.0.0", confirmedSequence: 3 },
      "confirmed sequence 3 is not below 2",
    ],
    [
      "a node running a newer registered release is not moved down to the target",
      { agentVersion: "3.0.0", runningSequence: 3 },
      "runs sequence 3, not below 2",
    ],
    [
      "a node running a newer version that is not registered, with nothing confirmed, is never moved back",
      { agentVersion: "9.0.0", runningSequence: undefined, confirmedSequence: 0 },
      "runs 9.0.0, not older than 2.0.0",
    ],
    [
      "a node running a registered release with a newer version but a lower sequence is never moved back",
      { agentVersion: "3.0.0", runningSequence: 1, confirmedSequence: 0 },
      "runs 3.0.0, not older than 2.0.0",
    ],
    [
      "a node running the target's version with other build metadata is not moved",
      { agentVersion: "2.0.0+local.7", runningSequence: undefined, confirmedSequence: 0 },
      "runs 2.0.0+local.7, not older than 2.0.0",
    ],
    [
      "a node running an older version that is not registered is behind",
      { agentVersion: "1.5.0", runningSequence: undefined, confirmedSequence: 0 },
      undefined,
    ],
    [
      "a node whose version is neither registered nor SemVer is left alone",
      { agentVersion: "nightly", runningSequence: undefined, confirmedSequence: 0 },
      "runs nightly, which is neither a registered release nor a version comparable with 2.0.0",
    ],
    [
      "a node whose version is unknown is left alone",
      { agentVersion: undefined },
      "version unknown",
    ],
  ];
  it.each(cases)("%s", (_name, over, reason) => {
    expect(notBehindReason(node("n1", over), T2)).toBe(reason);
  });
});

describe("which desired version governs a node", () => {
  it("the newest one whose selector takes the node governs it", () => {
    const older = desired();
    const newer = desired({
      id: "d-labels",
      selector: { labels: { tier: "web" }, pools: [], nodeIds: [] },
      setAt: 5000,
      target: { version: "3.0.0", sequence: 3 },
    });
    expect(governingDesired(node("a", { labels: { tier: "web" } }), [older, newer])?.id).toBe(
      "d-labels",
    );
    expect(governingDesired(node("b"), [older, newer])?.id).toBe(older.id);
    expect(governingDesired(node("c", { pool: "dev" }), [older, newer])).toBeUndefined();
  });

  it("a campaign's completion records its selector's desired version, and an older one never replaces a newer", () => {
    const spec = resolveSpec({ targetVersion: "2.0.0", selector: { pools: ["prod"] } });
    const d = desiredOfCampaign({ campaignId: "c1", spec, target: T2, finishedAt: 9000 });
    expect(d.id).toBe(desired().id);
    expect(d.setBy).toBe("campaign:c1");
    expect(replacesDesired(undefined, d)).toBe(true);
    expect(replacesDesired({ ...d, setAt: 10_000 }, d)).toBe(false);
    expect(replacesDesired({ ...d, setAt: 8000 }, d)).toBe(true);
  });

  it("the same selector written in another order has the same id", () => {
    const a = desiredIdOf(
      { labels: { a: "1", b: "2" }, pools: ["y", "x"], nodeIds: [] },
      { nodeIds: [], tags: {} },
    );
    const b = desiredIdOf(
      { labels: { b: "2", a: "1" }, pools: ["x", "y"], nodeIds: [] },
      { nodeIds: [], tags: {} },
    );
    expect(a).toBe(b);
  });
});

describe("what convergence does now", () => {
  const d = desired();
  const cases: {
    name: string;
    fleet: FleetNode[];
    desired?: DesiredVersion[];
    runs?: ConvergenceRun[];
    expected: unknown[];
  }[] = [
    {
      name: "behind nodes that are online and idle get one convergence campaign",
      fleet: [node("b"), node("a"), node("c", { agentVersion: "2.0.0" })],
      expected: [
        { kind: "converge", desiredId: d.id, campaignId: `${d.id}-1`, nodeIds: ["a", "b"] },
      ],
    },
    {
      name: "offline, busy, disabled and non-upgradable nodes wait",
      fleet: [
        node("a", { online: false }),
        node("b", { busy: true }),
        node("c", { enabled: false }),
        node("d", { capabilities: [] }),
      ],
      expected: [],
    },
    {
      name: "nothing starts while a convergence campaign of the same desired version runs",
      fleet: [node("a")],
      runs: [run(d, 1, { finished: false })],
      expected: [],
    },
    {
      name: "the next campaign is numbered after every earlier one",
      fleet: [node("a")],
      runs: [run(d, 1), run(d, 2)],
      expected: [{ kind: "converge", desiredId: d.id, campaignId: `${d.id}-3`, nodeIds: ["a"] }],
    },
    {
      name: "a node that failed convergence since the desired version was set is not offered again",
      fleet: [node("a"), node("b")],
      runs: [run(d, 1, { failedNodeIds: ["a"] })],
      expected: [{ kind: "converge", desiredId: d.id, campaignId: `${d.id}-2`, nodeIds: ["b"] }],
    },
    {
      name: "failures before the desired version was set again do not count",
      fleet: [node("a")],
      runs: [run(d, 1, { failedNodeIds: ["a", "x", "y"], createdAt: 500 })],
      expected: [{ kind: "converge", desiredId: d.id, campaignId: `${d.id}-2`, nodeIds: ["a"] }],
    },
    {
      name: "a burst of failures reaching the limit halts convergence, starts nothing and aborts the running campaign",
      fleet: [node("a")],
      runs: [
        run(d, 1, { failedNodeIds: ["x", "y"], phase: "completed" }),
        run(d, 2, { failedNodeIds: ["z"], finished: false, phase: "running" }),
      ],
      expected: [
        {
          kind: "halt",
          desiredId: d.id,
          failures: 3,
          failedNodeIds: ["x", "y", "z"],
          message: "convergence to 2.0.0 halted: 3 node(s) failed (x, y, z), the limit is 3",
          abortCampaignIds: [`${d.id}-2`],
        },
      ],
    },
    {
      name: "an operator's abort of a convergence campaign since the desired version was set halts it",
      fleet: [node("a")],
      runs: [run(d, 1, { phase: "aborted" })],
      expected: [
        {
          kind: "halt",
          desiredId: d.id,
          failures: 0,
          failedNodeIds: [],
          message: `convergence to 2.0.0 halted: its campaign ${d.id}-1 was aborted by an operator; set the desired version again to resume`,
          abortCampaignIds: [],
        },
      ],
    },
    {
      name: "an abort with rollback halts it too, even before the campaign finished",
      fleet: [node("a")],
      runs: [run(d, 1, { phase: "rolled_back", finished: false })],
      expected: [expect.objectContaining({ kind: "halt", abortCampaignIds: [] })],
    },
    {
      name: "an abort before the desired version was set again does not halt it",
      fleet: [node("a")],
      runs: [run(d, 1, { phase: "aborted", createdAt: 500 })],
      expected: [{ kind: "converge", desiredId: d.id, campaignId: `${d.id}-2`, nodeIds: ["a"] }],
    },
    {
      name: "a halted desired version starts nothing and is not halted again",
      fleet: [node("a")],
      desired: [desired({ haltedAt: 3000, haltedReason: "burst" })],
      runs: [run(d, 1, { failedNodeIds: ["x", "y", "z"] })],
      expected: [],
    },
    {
      name: "a node that confirmed the target's sequence is never converged backwards",
      fleet: [node("a", { agentVersion: "3.0.0", confirmedSequence: 3, runningSequence: 3 })],
      expected: [],
    },
  ];
  it.each(cases)("$name", (c) => {
    expect(
      planConvergence({ desired: c.desired ?? [d], fleet: c.fleet, runs: c.runs ?? [], now: 5000 }),
    ).toEqual(c.expected);
  });

  it("tells a convergence campaign's id from an administrator's", () => {
    expect(isConvergenceCampaignId(convergenceCampaignId(d.id, 12))).toBe(true);
    expect(isConvergenceCampaignId("c-20250301-101500-1a2b3c")).toBe(false);
    expect(isConvergenceCampaignId(`${d.id}-0`)).toBe(false);
    expect(isConvergenceCampaignId(`${d.id}-1-g1`)).toBe(false);
  });

  it("a convergence campaign is one batch over exactly its nodes, tolerating failures within itself, under the desired version's budget", () => {
    const spec = convergenceSpec(d, ["a", "b"], 0);
    expect(spec.selector).toEqual({ labels: {}, pools: [], nodeIds: ["a", "b"] });
    expect(spec.batches).toEqual([{ percent: 100, minDurationMs: 0 }]);
    expect(spec.failureThresholdPercent).toBe(100);
    expect(spec.disruptionBudgetPercent).toBe(20);
    expect(spec.targetVersion).toBe("2.0.0");
  });

  it.each([
    { maxFailures: 3, failedSoFar: 0, allowed: 2 },
    { maxFailures: 3, failedSoFar: 2, allowed: 0 },
    { maxFailures: 1, failedSoFar: 0, allowed: 0 },
    { maxFailures: 5, failedSoFar: 1, allowed: 3 },
    { maxFailures: 2, failedSoFar: 4, allowed: 0 },
  ])(
    "a convergence campaign with $failedSoFar earlier failures of a limit of $maxFailures tolerates $allowed, so the one completing the burst breaches it",
    (c) => {
      const limited = { ...d, settings: { ...d.settings, maxFailures: c.maxFailures } };
      expect(convergenceSpec(limited, ["a"], c.failedSoFar).maxFailures).toEqual({
        kind: "count",
        count: c.allowed,
      });
    },
  );
});
