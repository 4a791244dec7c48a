/**
 * The rules of desired versions that the main desired-version tests leave open: a desired id is
 * stable and tells every part of a selector apart, what a campaign's completion and an
 * administrator's set record, which of two equally recent desired versions governs, and the
 * edges of "behind".
 */
import { describe, expect, it } from "vitest";
import {
  CONVERGENCE_CREATOR,
  type DesiredVersion,
  defaultConvergenceSettings,
  desiredIdOf,
  desiredOfCampaign,
  type FleetNode,
  governingDesired,
  notBehindReason,
  replacesDesired,
  resolveSpec,
  selectorKey,
} from "../../../control/campaign/index.js";
import { fleetNode, T2 } from "./fleet-fixture.js";

/** Node n1 of pool prod, online on 1.0.0. */
const node = (over: Partial<FleetNode> = {}) => fleetNode("n1", over);

const NONE = { nodeIds: [], tags: {} };
const PROD = { labels: {}, pools: ["prod"], nodeIds: [] };

function desired(id: string, setAt: number): DesiredVersion {
  return {
    id,
    selector: PROD,
    exclude: NONE,
    target: T2,
    setAt,
    setBy: "admin",
    settings: defaultConvergenceSettings(60_000, 0),
    haltedAt: undefined,
    haltedReason: undefined,
  };
}

describe("a desired version's id", () => {
  it("is d- and the first 10 hex digits of the SHA-256 of the canonical selector (stored ids stay valid)", () => {
    // sha256('{"labels":{},"pools":["prod"],"nodeIds":[],"excludeNodeIds":[],"excludeTags":{}}')
    expect(desiredIdOf(PROD, NONE)).toBe("d-361b3c4f54");
  });

  it("a convergence campaign's stored creator is convergence: and the desired id", () => {
    expect(`${CONVERGENCE_CREATOR}${desiredIdOf(PROD, NONE)}`).toBe("convergence:d-361b3c4f54");
  });

  it("writes the canonical selector with sorted keys and sorted, de-duplicated lists", () => {
    expect(
      selectorKey(
        { labels: { b: "2", a: "1", c: "3" }, pools: ["y", "x", "y"], nodeIds: ["n2", "n1", "n2"] },
        { nodeIds: ["z", "w", "z"], tags: { t: "1", s: "2" } },
      ),
    ).toBe(
      '{"labels":{"a":"1","b":"2","c":"3"},"pools":["x","y"],"nodeIds":["n1","n2"],' +
        '"excludeNodeIds":["w","z"],"excludeTags":{"s":"2","t":"1"}}',
    );
  });

  it("tells apart selectors that differ in any one part", () => {
    const ids = [
      desiredIdOf(PROD, NONE),
      desiredIdOf({ ...PROD, labels: { tier: "web" } }, NONE),
      desiredIdOf({ ...PROD, pools: ["dev"] }, NONE),
      desiredIdOf({ ...PROD, nodeIds: ["n1"] }, NONE),
      desiredIdOf(PROD, { nodeIds: ["n1"], tags: {} }),
      desiredIdOf(PROD, { nodeIds: [], tags: { tier: "web" } }),
    ];
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe("what a desired version records", () => {
  it("a campaign's completion records its selector, target, time, campaign and settings, not halted", () => {
    const spec = resolveSpec({
      targetVersion: "2.0.0",
      selector: { pools: ["prod"] },
      exclude: { nodeIds: ["n9"] },
      reconnectTimeoutMs: 120_000,
      configGraceMs: 30_000,
      disruptionBudgetPercent: 15,
    });
    expect(desiredOfCampaign({ campaignId: "c7", spec, target: T2, finishedAt: 9000 })).toEqual({
      id: desiredIdOf(spec.selector, spec.exclude),
      selector: spec.selector,
      exclude: spec.exclude,
      target: T2,
      setAt: 9000,
      setBy: "campaign:c7",
      settings: {
        reconnectTimeoutMs: 120_000,
        configGraceMs: 30_000,
        disruptionBudgetPercent: 15,
        maxFailures: 3,
        // The campaign's guard rails: here only its (default) threshold.
        guardRails: { failureThresholdPercent: 5 },
      },
      haltedAt: undefined,
      haltedReason: undefined,
    });
  });

  it("an administrator's set takes the default budget (5 %) and failure limit (3)", () => {
    expect(defaultConvergenceSettings(90_000, 10_000)).toEqual({
      reconnectTimeoutMs: 90_000,
      configGraceMs: 10_000,
      disruptionBudgetPercent: 5,
      maxFailures: 3,
    });
  });

  it("a setting made at the same millisecond as the stored one replaces it", () => {
    expect(replacesDesired(desired("d-a", 5000), desired("d-a", 5000))).toBe(true);
  });
});

describe("which of two equally recent desired versions governs a node", () => {
  it("the one with the greater id, whatever their order", () => {
    const a = desired("d-aaaa", 5000);
    const b = desired("d-bbbb", 5000);
    expect(governingDesired(node(), [a, b])?.id).toBe("d-bbbb");
    expect(governingDesired(node(), [b, a])?.id).toBe("d-bbbb");
  });

  it("a newer one governs whatever its id, and an older one never replaces it", () => {
    const older = desired("d-zzzz", 4000);
    const newer = desired("d-aaaa", 5000);
    expect(governingDesired(node(), [older, newer])?.id).toBe("d-aaaa");
    expect(governingDesired(node(), [newer, older])?.id).toBe("d-aaaa");
  });
});

describe("the edges of behind", () => {
  it("a node running the target's sequence under another version is not moved", () => {
    expect(notBehindReason(node({ agentVersion: "2.0.0-rc.1", runningSequence: 2 }), T2)).toBe(
      "runs sequence 2, not below 2",
    );
  });

  it("a node one sequence below the target is behind", () => {
    expect(notBehindReason(node({ confirmedSequence: 1, runningSequence: 1 }), T2)).toBe(undefined);
  });

  it("a registered release that is not SemVer, below the target's sequence, is behind", () => {
    expect(
      notBehindReason(
        node({ agentVersion: "nightly", runningSequence: 1, confirmedSequence: 0 }),
        T2,
      ),
    ).toBe(undefined);
  });

  it("a SemVer node under a target that is not SemVer is compared by sequence alone", () => {
    const target = { version: "release-b", sequence: 2 };
    expect(
      notBehindReason(
        node({ agentVersion: "9.0.0", runningSequence: 1, confirmedSequence: 0 }),
        target,
      ),
    ).toBe(undefined);
    expect(
      notBehindReason(
        node({ agentVersion: "9.0.0", runningSequence: undefined, confirmedSequence: 0 }),
        target,
      ),
    ).toBe(
      "runs 9.0.0, which is neither a registered release nor a version comparable with release-b",
    );
  });
});
