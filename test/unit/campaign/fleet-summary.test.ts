import { describe, expect, it } from "vitest";
import {
  type ConvergenceRun,
  type DesiredVersion,
  type FleetNode,
  summarizeFleet,
} from "../../../control/campaign/index.js";
import { desiredOver as desired, fleetNode as node } from "./fleet-fixture.js";
import { windowsOf } from "./windows-of.js";

function failedRun(d: DesiredVersion, failedNodeIds: string[]): ConvergenceRun {
  return {
    campaignId: `${d.id}-1`,
    desiredId: d.id,
    createdAt: d.setAt + 1,
    finished: true,
    failedNodeIds,
  };
}

/** The reasons of the one desired version, as code → node ids. */
function reasonsOf(fleet: FleetNode[], d: DesiredVersion, runs: ConvergenceRun[] = []) {
  const [c] = summarizeFleet({ fleet, desired: [d], runs }).desired;
  return Object.fromEntries((c?.reasons ?? []).map((r) => [r.code, r.nodeIds]));
}

describe("the fleet summary", () => {
  it("counts nodes by version (most first, unknown as empty) and by pool, online apart", () => {
    const s = summarizeFleet({
      fleet: [
        node("a", { agentVersion: "2.0.0" }),
        node("b", { agentVersion: "2.0.0", online: false, pool: "db" }),
        node("c"),
        node("d", { agentVersion: undefined, enabled: false, pool: "db" }),
        node("e", { agentVersion: "2.0.0" }),
      ],
      desired: [],
      runs: [],
    });
    expect(s.nodes).toBe(5);
    expect(s.online).toBe(4);
    expect(s.versions).toEqual([
      { key: "2.0.0", nodes: 3, online: 2, disabled: 0 },
      { key: "", nodes: 1, online: 1, disabled: 1 },
      { key: "1.0.0", nodes: 1, online: 1, disabled: 0 },
    ]);
    expect(s.pools).toEqual([
      { key: "db", nodes: 2, online: 1, disabled: 1 },
      { key: "prod", nodes: 3, online: 3, disabled: 0 },
    ]);
  });

  it("calls a desired version converged when every node it governs runs its target", () => {
    const d = desired(["prod"]);
    const [c] = summarizeFleet({
      fleet: [
        node("a", { agentVersion: "2.0.0" }),
        node("b", { agentVersion: "1.0.0", pool: "db" }),
      ],
      desired: [d],
      runs: [],
    }).desired;
    expect(c).toMatchObject({ state: "converged", nodes: 1, converged: 1, behind: 0, reasons: [] });
  });

  it("names the first reason that holds for every node behind, most nodes first", () => {
    const d = desired(["prod"]);
    const fleet = [
      node("on", { agentVersion: "2.0.0" }),
      node("busy", { busy: true, online: false }),
      node("off1", { online: false }),
      node("off2", { online: false, capabilities: [] }),
      node("off", { enabled: false, online: false }),
      node("new", { everConnected: false, online: false }),
      node("old", { capabilities: [] }),
      node("nightly", {
        agentVersion: "nightly",
        runningSequence: undefined,
        confirmedSequence: 0,
      }),
      node("ahead", { agentVersion: "3.0.0", runningSequence: 3, confirmedSequence: 3 }),
      node("next"),
    ];
    const [c] = summarizeFleet({ fleet, desired: [d], runs: [] }).desired;
    expect(c?.state).toBe("behind");
    // Like every selection, a desired version governs no disabled node and none that never
    // connected (the pools count the disabled ones). The node ahead is not behind.
    expect(c?.nodes).toBe(8);
    expect(c?.behind).toBe(6);
    expect(c?.ahead).toBe(1);
    expect(c?.reasons.map((r) => [r.code, r.nodes])).toEqual([
      ["offline", 2],
      ["in_campaign", 1],
      ["not_older", 1],
      ["queued", 1],
      ["upgrade_unsupported", 1],
    ]);
    expect(reasonsOf(fleet, d).offline).toEqual(["off1", "off2"]);
    expect(c?.reasons.find((r) => r.code === "offline")?.text).toBe(
      "offline: offered when it reconnects",
    );
  });

  it("counts a node that failed a convergence campaign since the version was set as failed", () => {
    const d = desired(["prod"]);
    const fleet = [node("a"), node("b"), node("c", { agentVersion: "2.0.0" })];
    expect(reasonsOf(fleet, d, [failedRun(d, ["a"])])).toEqual({ failed: ["a"], queued: ["b"] });
    // A failure before the version was set again does not count.
    const older = { ...failedRun(d, ["a"]), createdAt: d.setAt - 1 };
    expect(reasonsOf(fleet, d, [older])).toEqual({ queued: ["a", "b"] });
  });

  it("shows a halted desired version as halted with its failures, even once no node is behind", () => {
    const d = desired(["prod"], { haltedAt: 5000, haltedReason: "3 node(s) failed" });
    const runs = [failedRun(d, ["b", "a", "a"])];
    const [c] = summarizeFleet({ fleet: [node("a"), node("b")], desired: [d], runs }).desired;
    expect(c).toMatchObject({ state: "halted", behind: 2, failedNodeIds: ["a", "b"] });
    expect(c?.reasons).toEqual([
      {
        code: "halted",
        text: "convergence halted: not offered until the desired version is set again",
        nodes: 2,
        nodeIds: ["a", "b"],
      },
    ]);
    const [done] = summarizeFleet({
      fleet: [node("a", { agentVersion: "2.0.0" })],
      desired: [d],
      runs,
    }).desired;
    expect(done?.state).toBe("halted");
  });

  it("judges a node only under the desired version that governs it (the newest that takes it)", () => {
    const all = desired([], { setAt: 1000 });
    const prod = desired(["prod"], { setAt: 2000, target: { version: "3.0.0", sequence: 3 } });
    const s = summarizeFleet({
      fleet: [node("a"), node("b", { pool: "db", agentVersion: "2.0.0" })],
      desired: [all, prod],
      runs: [],
    });
    expect(s.desired.map((c) => [c.nodes, c.converged, c.behind])).toEqual([
      [1, 1, 0],
      [1, 0, 1],
    ]);
  });

  it("names at most ten nodes per reason, by id, and counts them all", () => {
    const d = desired(["prod"]);
    const fleet = Array.from({ length: 25 }, (_, i) => node(`n${String(25 - i).padStart(2, "0")}`));
    const [c] = summarizeFleet({ fleet, desired: [d], runs: [] }).desired;
    expect(c?.reasons[0]?.nodes).toBe(25);
    expect(c?.reasons[0]?.nodeIds).toEqual(
      Array.from({ length: 10 }, (_, i) => `n${String(i + 1).padStart(2, "0")}`),
    );
  });

  it("counts a node past the target (a higher running or confirmed sequence) as ahead, never behind: the version converges", () => {
    const d = desired(["prod"]);
    const fleet = [
      node("on", { agentVersion: "2.0.0", runningSequence: 2, confirmedSequence: 2 }),
      node("runs3", { agentVersion: "3.0.0", runningSequence: 3, confirmedSequence: 2 }),
      node("confirmed3", {
        agentVersion: "3.0.0",
        runningSequence: undefined,
        confirmedSequence: 3,
      }),
      node("semver9", { agentVersion: "9.0.0", runningSequence: undefined, confirmedSequence: 0 }),
    ];
    const [c] = summarizeFleet({ fleet, desired: [d], runs: [] }).desired;
    expect(c).toMatchObject({
      state: "converged",
      nodes: 4,
      converged: 1,
      behind: 0,
      ahead: 3,
      aheadNodeIds: ["confirmed3", "runs3", "semver9"],
      reasons: [],
    });
  });

  it("says a node behind waits for a window while every window of the desired version's guard rails is closed", () => {
    const saturdayNight = windowsOf("Sat 02:00-04:00 UTC");
    const d = desired(["prod"], {
      settings: { ...desired(["prod"]).settings, guardRails: { windows: saturdayNight } },
    });
    const tuesday = Date.UTC(2031, 0, 7, 14, 0);
    const saturday = Date.UTC(2031, 0, 11, 2, 30);
    const fleet = [node("late"), node("gone", { online: false })];
    const at = (now: number) =>
      summarizeFleet({ fleet, desired: [d], runs: [], now }).desired[0]?.reasons.map((r) => [
        r.code,
        r.nodeIds,
        r.text,
      ]);
    expect(at(tuesday)).toEqual([
      ["offline", ["gone"], "offline: offered when it reconnects"],
      [
        "window_closed",
        ["late"],
        "waits for a maintenance window of the campaign that set it (Sat 02:00-04:00 UTC)",
      ],
    ]);
    expect(at(saturday)).toEqual([
      ["offline", ["gone"], "offline: offered when it reconnects"],
      ["queued", ["late"], "offered by the next convergence pass"],
    ]);
  });
});
