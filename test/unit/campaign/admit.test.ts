/**
 * The one admission of every start (`admit`), table-driven: each check in its order, what it
 * refuses and what it lets through, judged against hand-counted expectations.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type AdmissionCandidate,
  type AdmissionInput,
  type AdmissionRefusal,
  admit,
  type CampaignSpecInput,
  createCampaign,
  DEFAULT_POLICY,
  FIXED_ORDER_SECRET,
  type Policy,
  rampSizes,
  rampStepsNeeded,
  refusalMessage,
  resolveSpec,
} from "../../../control/campaign/index.js";

const MIN = 60_000;
const NOW = Date.UTC(2031, 0, 1);
const POLICY: Policy = { ...DEFAULT_POLICY, minBatchDurationMs: MIN };

function node(id: string, over: Partial<AdmissionCandidate> = {}): AdmissionCandidate {
  return {
    id,
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
  Array.from({ length: n }, (_, i) => node(`n${String(i).padStart(3, "0")}`, over(i)));

const batches = (...percents: number[]) =>
  percents.map((percent) => ({ percent, minDurationMs: MIN }));

function input(over: {
  spec?: Partial<CampaignSpecInput>;
  candidates?: readonly AdmissionCandidate[];
  policy?: Partial<Policy>;
  maxVersion?: string;
  release?: AdmissionInput["release"] | null;
  busy?: ReadonlyMap<string, string>;
  intent?: "plan" | "start";
  origin?: "operator" | "system";
}): AdmissionInput {
  const policy = { ...POLICY, ...over.policy };
  return {
    intent: over.intent ?? "start",
    origin: over.origin ?? "operator",
    spec: resolveSpec({ targetVersion: "2.0.0", batches: batches(5, 100), ...over.spec }, policy),
    rules: { policy, maxVersion: over.maxVersion },
    release:
      over.release === null
        ? undefined
        : (over.release ?? {
            version: "2.0.0",
            sequence: 20,
            expiresAt: NOW + 3600_000,
            platforms: ["linux-amd64"],
          }),
    candidates: over.candidates ?? fleet(20),
    busy: over.busy ?? new Map(),
    now: NOW,
    orderSecret: FIXED_ORDER_SECRET,
  };
}

function refusalOf(i: AdmissionInput): AdmissionRefusal {
  const a = admit(i);
  if (a.ok) throw new Error("admitted");
  return a.refusal;
}

describe("admission refuses, each check in its order", () => {
  it.each<[string, AdmissionInput, AdmissionRefusal["kind"], RegExp]>([
    [
      "a first batch above the configured canary share",
      input({ spec: { batches: batches(10, 100) }, policy: { firstBatchMaxPercent: 5 } }),
      "invalid_spec",
      /the first \(canary\) batch is at most 5 %, not 10 %/,
    ],
    [
      "eleven batches when the policy allows ten",
      input({ spec: { batches: batches(1, 2, 3, 4, 5, 10, 20, 30, 40, 50, 100) } }),
      "invalid_spec",
      /a campaign has 1 to 10 batches, not 11/,
    ],
    [
      "a batch shorter than the policy minimum",
      input({ spec: { batches: [{ percent: 5, minDurationMs: 1000 }, ...batches(100)] } }),
      "invalid_spec",
      /lasts at least 1 min/,
    ],
    [
      "an unregistered release (after the spec)",
      input({ release: null }),
      "release_not_found",
      /release 2\.0\.0 is not registered/,
    ],
    [
      "a release newer than agent.maxVersion",
      input({ maxVersion: "1.9.0" }),
      "release_too_new",
      /newer than 1\.9\.0, the newest Agent this Control supports \(agent\.maxVersion\)/,
    ],
    [
      "an expired release, by the given time",
      input({
        release: { version: "2.0.0", sequence: 20, expiresAt: NOW, platforms: undefined },
      }),
      "release_expired",
      /expired at 2031-01-01T00:00:00\.000Z/,
    ],
    [
      "a ramp needing more steps than the policy's batch limit",
      input({ spec: { batches: [], ramp: { startPerMinute: 1 / 60, factor: 1.01 } } }),
      "too_many_steps",
      /the ramp would need 20 steps for 20 nodes, and a campaign has at most 10 batches \(policy\.maxBatches\)/,
    ],
    [
      "every selected node confirmed a higher sequence (each is skipped ahead_of_target): nothing to upgrade",
      input({ candidates: fleet(3, () => ({ confirmedSequence: 30 })) }),
      "nothing_to_upgrade",
      /no node can be upgraded: all 3 selected node\(s\) are already on 2\.0\.0, lack upgrade\.v1, run a platform the release has no artifact for or confirmed a higher sequence/,
    ],
    [
      "a node busy in another campaign",
      input({ busy: new Map([["n004", "c-other"]]) }),
      "busy",
      /1 node\(s\) already in an active campaign \(c-other\): n004/,
    ],
    [
      "a selector that matches no enabled, connected node",
      input({ spec: { selector: { labels: { group: "nobody" } } } }),
      "nothing_to_upgrade",
      /no enabled node that has connected matches the selector/,
    ],
    [
      "nodes all of a platform the release lacks",
      input({ candidates: fleet(3, () => ({ platform: "linux-arm64" })) }),
      "nothing_to_upgrade",
      /all 3 selected node\(s\) are already on 2\.0\.0, lack upgrade\.v1, run a platform/,
    ],
  ])("%s", (_name, i, kind, message) => {
    const r = refusalOf(i);
    expect(r.kind).toBe(kind);
    expect(refusalMessage(r)).toMatch(message);
  });

  it("takes the first failing check: an invalid spec over an unregistered release is invalid", () => {
    const r = refusalOf(input({ spec: { batches: batches(50, 100) }, release: null }));
    expect(r.kind).toBe("invalid_spec");
  });
});

describe("admission lets through", () => {
  it.each<[string, AdmissionInput, number[]]>([
    ["the default shape over 20 nodes", input({}), [1, 19]],
    [
      "a ramp of exactly the policy's batch limit",
      input({
        candidates: fleet(10),
        spec: { batches: [], ramp: { startPerMinute: 1, factor: 1, stepMs: MIN } },
      }),
      [1, 1, 1, 1, 1, 1, 1, 1, 1, 1],
    ],
    [
      "a ramp whose first step is capped at the configured canary share",
      input({
        candidates: fleet(200),
        policy: { firstBatchMaxPercent: 1 },
        spec: { batches: [], ramp: { startPerMinute: 100, factor: 2, stepMs: MIN } },
      }),
      [2, 198],
    ],
    [
      "a convergence spec of one 100 % batch with no minimum (origin system)",
      input({ origin: "system", spec: { batches: [{ percent: 100, minDurationMs: 0 }] } }),
      [20],
    ],
  ])("%s", (_name, i, sizes) => {
    const a = admit(i);
    expect(a.ok).toBe(true);
    if (a.ok) expect(a.plan.batches.map((b) => b.nodeIds.length)).toEqual(sizes);
  });

  it("a plan: busy nodes and an empty plan are not refused", () => {
    const busy = new Map([["n004", "c-other"]]);
    expect(admit(input({ intent: "plan", busy })).ok).toBe(true);
    const none = input({ intent: "plan", spec: { selector: { labels: { group: "x" } } } });
    const a = admit(none);
    expect(a.ok && a.plan.totalNodes).toBe(0);
  });

  it("nodes on the target, without upgrade.v1 or with a higher confirmed sequence on the target are not refused", () => {
    const candidates = fleet(5, (i) =>
      i === 0
        ? { agentVersion: "2.0.0", confirmedSequence: 30 }
        : i === 1
          ? { capabilities: [], confirmedSequence: 30 }
          : i === 2
            ? { platform: "linux-arm64", confirmedSequence: 30 }
            : {},
    );
    expect(admit(input({ candidates })).ok).toBe(true);
  });

  it("skips the nodes of a platform the release lacks with platform_unsupported, grouped per platform, never as failures", () => {
    const candidates = fleet(25, (i) =>
      i % 5 === 0 ? { platform: "linux-arm64" } : i === 7 ? { platform: "" } : {},
    );
    const a = admit(input({ candidates, spec: { batches: batches(5, 50, 100) } }));
    if (!a.ok) throw new Error(refusalMessage(a.refusal));
    const arm = ["n000", "n005", "n010", "n015", "n020"];
    expect(a.plan.platformUnsupportedNodeIds.slice().sort()).toEqual(arm);
    expect(a.plan.skips).toEqual([
      {
        code: "platform_unsupported",
        message: "release 2.0.0 has no artifact for linux-arm64",
        nodeIds: a.plan.platformUnsupportedNodeIds,
      },
    ]);
    // A node of an unknown platform is not judged on it.
    expect(a.plan.upgradableCount).toBe(20);
    const { nodes } = createCampaign({
      id: "c1",
      spec: resolveSpec({ targetVersion: "2.0.0" }),
      plan: a.plan,
      target: a.target,
      now: NOW,
    });
    const skipped = nodes.filter((n) => n.state === "skipped");
    expect(skipped.map((n) => n.nodeId).sort()).toEqual(arm);
    for (const n of skipped) {
      expect([n.code, n.message, n.finishedAt]).toEqual([
        "platform_unsupported",
        "release 2.0.0 has no artifact for linux-arm64",
        NOW,
      ]);
    }
    expect(nodes.filter((n) => n.state === "waiting")).toHaveLength(20);
  });

  it("skips a node that confirmed a higher sequence with ahead_of_target, in its place, never offered nor a failure; the rest start", () => {
    const candidates = fleet(20, (i) =>
      i === 3 ? { confirmedSequence: 30 } : i === 8 ? { confirmedSequence: 25 } : {},
    );
    for (const intent of ["plan", "start"] as const) {
      const a = admit(input({ intent, candidates }));
      if (!a.ok) throw new Error(refusalMessage(a.refusal));
      expect(a.plan.totalNodes).toBe(20);
      expect(a.plan.upgradableCount).toBe(18);
      expect(a.plan.aheadOfTargetNodeIds.slice().sort()).toEqual(["n003", "n008"]);
      expect(a.plan.skips).toEqual([
        {
          code: "ahead_of_target",
          message:
            "the agent confirmed a sequence above 20 (release 2.0.0): it refuses anything below",
          nodeIds: a.plan.aheadOfTargetNodeIds,
        },
      ]);
    }
    const a = admit(input({ candidates }));
    if (!a.ok) throw new Error(refusalMessage(a.refusal));
    const { nodes } = createCampaign({
      id: "c1",
      spec: resolveSpec({ targetVersion: "2.0.0" }),
      plan: a.plan,
      target: a.target,
      now: NOW,
    });
    const skipped = nodes.filter((n) => n.state === "skipped");
    expect(skipped.map((n) => [n.nodeId, n.code, n.finishedAt]).sort()).toEqual([
      ["n003", "ahead_of_target", NOW],
      ["n008", "ahead_of_target", NOW],
    ]);
    expect(nodes.filter((n) => n.state === "waiting")).toHaveLength(18);
  });

  it("a node without upgrade.v1 or of a platform the release lacks keeps that code, whatever it confirmed", () => {
    const candidates = fleet(3, (i) =>
      i === 0
        ? { capabilities: [], confirmedSequence: 30 }
        : i === 1
          ? { platform: "linux-arm64", confirmedSequence: 30 }
          : {},
    );
    const a = admit(input({ candidates }));
    if (!a.ok) throw new Error(refusalMessage(a.refusal));
    expect(a.plan.skips.map((k) => [k.code, k.nodeIds])).toEqual([
      ["upgrade_unsupported", ["n000"]],
      ["platform_unsupported", ["n001"]],
    ]);
  });

  it("does not judge platforms when the release's are not known", () => {
    const candidates = fleet(3, () => ({ platform: "linux-arm64" }));
    const a = admit(
      input({
        candidates,
        release: { version: "2.0.0", sequence: 20, expiresAt: undefined, platforms: undefined },
      }),
    );
    expect(a.ok && a.plan.upgradableCount).toBe(3);
  });
});

describe("the step count admission judges is the plan's", () => {
  it("equals the number of batches the plan lays out, for any ramp within the guard", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 400 }),
        fc.double({ min: 0.01, max: 50, noNaN: true }),
        fc.double({ min: 1, max: 3, noNaN: true }),
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 100 }),
        (total, startPerMinute, factor, stepMinutes, firstMax) => {
          const ramp = { startPerMinute, factor, maxPerMinute: 0, stepMs: stepMinutes * MIN };
          const steps = rampStepsNeeded(total, ramp, firstMax);
          // Reference: one node at a time, a new step whenever the current one is full.
          let expected = 0;
          let inStep = 0;
          let room = 0;
          for (let n = 0; n < total; n++) {
            if (inStep === room) {
              const rate = startPerMinute * factor ** expected;
              room = Math.max(1, Math.floor(rate * stepMinutes + 1e-9));
              if (expected === 0)
                room = Math.min(room, Math.max(1, Math.floor((total * firstMax) / 100)));
              expected++;
              inStep = 0;
            }
            inStep++;
          }
          expect(steps).toBe(expected);
          if (steps <= 200) expect(rampSizes(total, ramp, firstMax)).toHaveLength(steps);
        },
      ),
    );
  });
});
