/**
 * Properties of the campaign engine about the nodes it must leave alone: a disabled node is
 * never offered the target, and a reconnecting node is never skipped as offline.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { runChecked } from "./checked-run.js";
import { PROPERTY_RUNS, scenariosWith } from "./scenario-arbitraries.js";
import type { Behaviour } from "./sim.js";

describe("campaign engine properties", () => {
  it("never offers a disabled node, and skips a node disabled from the start node_disabled", () => {
    fc.assert(
      fc.property(
        fc.constantFrom<Behaviour>("disabled", "disable_later").chain(scenariosWith),
        (scenario) => {
          const result = runChecked(scenario);
          scenario.nodes.forEach((n, i) => {
            if (n.behaviour !== "disabled") return;
            const node = result.nodes.find((x) => x.nodeId === `n${i}`)!;
            expect(node.upgradeOperationId).toBeUndefined();
            if (node.state === "skipped") expect(node.code).toBe("node_disabled");
          });
        },
      ),
      { numRuns: PROPERTY_RUNS },
    );
  });

  it("never skips a reconnecting node as offline (no stream is not offline)", () => {
    fc.assert(
      fc.property(scenariosWith("reconnecting"), (scenario) => {
        const result = runChecked(scenario);
        scenario.nodes.forEach((n, i) => {
          if (n.behaviour !== "reconnecting") return;
          expect(result.nodes.find((x) => x.nodeId === `n${i}`)?.code).not.toBe("node_offline");
        });
      }),
      { numRuns: PROPERTY_RUNS },
    );
  });
});
