/**
 * The revert-report grace when one decision sees both a node's RESTARTING report and its next
 * boot's Hello: full, repeated and incremental decisions agree at every step.
 */
import { describe, expect, it } from "vitest";
import type { DecideInput, Decision, JudgedMark } from "../../../control/campaign/index.js";
import { applyDecision, decide } from "../../../control/campaign/index.js";
import { fleet, type Harness, nodeOf, OLD, reboot, report, start } from "./harness.js";
import { G, stampReport } from "./revert-grace-fixtures.js";

describe("determinism and incremental judging in the together case", () => {
  const decideBoth = (h: Harness, mark: JudgedMark | undefined, changed: Set<string>) => {
    const input: DecideInput = {
      campaign: h.campaign,
      nodes: h.nodes,
      facts: h.facts,
      now: h.now,
      target: h.target,
      commands: [],
    };
    const full = decide(input);
    const again = decide(input);
    const incremental = decide({
      ...input,
      judgedSince: mark === undefined ? undefined : { mark, changedFacts: changed },
    });
    return { full, again, incremental };
  };

  it("full, repeated and incremental decisions agree at every step; a decision applied is a fixpoint", () => {
    const h = start(fleet(3), {
      batches: [{ percent: 100, minDurationMs: 0 }],
      failureThresholdPercent: 100,
      concurrency: 3,
      disruptionBudgetPercent: 100,
    });
    let mark: JudgedMark | undefined;
    const steps: { dt: number; act: (h: Harness) => string[] }[] = [
      { dt: 0, act: () => [] },
      {
        dt: 1_000,
        act: (x) => {
          expect(x.nodes.map((n) => n.state)).toEqual(["offered", "offered", "offered"]);
          return [];
        },
      },
      {
        dt: 0,
        act: (x) => {
          report(x, "node-000", "RESTARTING");
          reboot(x, "node-000", OLD);
          report(x, "node-001", "RESTARTING");
          stampReport(x, "node-001", undefined);
          reboot(x, "node-001", OLD);
          report(x, "node-002", "RESTARTING");
          return ["node-000", "node-001", "node-002"];
        },
      },
      { dt: 2_000, act: () => [] },
      {
        dt: 1_000,
        act: (x) => {
          reboot(x, "node-002", OLD);
          return ["node-002"];
        },
      },
      { dt: G - 3_000, act: () => [] },
      { dt: 1_000, act: () => [] },
      { dt: 1, act: () => [] },
      { dt: G, act: () => [] },
    ];
    let last: Decision | undefined;
    for (const s of steps) {
      h.now += s.dt;
      const changed = new Set(s.act(h));
      const { full, again, incremental } = decideBoth(h, mark, changed);
      expect(again).toEqual(full);
      expect(incremental).toEqual(full);
      const next = applyDecision(h.campaign, h.nodes, full);
      h.campaign = next.campaign;
      h.nodes = next.nodes;
      mark = full.judged;
      // Level-based: the same input once more changes nothing and sends nothing.
      const replay = decide({
        campaign: h.campaign,
        nodes: h.nodes,
        facts: h.facts,
        now: h.now,
        target: h.target,
      });
      expect(replay.changes.nodes).toEqual([]);
      expect(replay.actions).toEqual([]);
      last = full;
    }
    expect(last).toBeDefined();
    for (const id of ["node-000", "node-001", "node-002"]) {
      expect(nodeOf(h, id)).toMatchObject({ state: "failed", code: "reverted" });
    }
  });
});
