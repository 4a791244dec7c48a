/**
 * The deferral invariants on hand-built worlds, each the world an engine defect would leave:
 * DF4 sees a node offered long after its max defer, and DF2 reads the max defer from the
 * reference (`simulation/reference/deferral.ts`), so an engine with a wrong default is seen
 * (the engine's own `maxDeferOf` is replaced by a wrong one here, and the oracle holds).
 */
import { describe, expect, it, vi } from "vitest";
import type { CampaignNode, CampaignSpecInput } from "../../control/campaign/index.js";
import type { SimAgent } from "../../simulation/agent-script.js";
import { deferralViolations } from "../../simulation/deferral-invariants.js";
import { NEW, OLD, oneBatchCampaign } from "./hand-built-world.js";
import { testAgent } from "./test-agent.js";

// The engine with a wrong default max defer (one minute, not the documented hour): an oracle
// that read `maxDeferOf` from the engine would see the same wrong default.
vi.mock("../../control/campaign/index.js", async (importOriginal) => {
  const engine = await importOriginal<typeof import("../../control/campaign/index.js")>();
  return {
    ...engine,
    maxDeferOf: (spec: { readonly maxDeferMs?: number | undefined }) => spec.maxDeferMs ?? 60_000,
  };
});

const MIN = 60_000;
const ID = "c0/n1/upgrade";

/** One campaign c0 over agent n1 (one batch), its node record patched by `node`. */
function world(a: SimAgent, spec: Partial<CampaignSpecInput>, node: Partial<CampaignNode>) {
  const { store, fleet, set } = oneBatchCampaign([a], spec);
  set({}, node);
  return { store, fleet };
}

/** The agent answers an offer of the upgrade at `at` DEFERRED. */
function defers(a: SimAgent, at: number): void {
  a.record.sent.push({
    id: ID,
    campaignId: "c0",
    kind: "upgrade",
    version: NEW,
    sequence: 2,
    at,
    agentVersion: a.version,
    agentConfirmed: a.confirmedSequence,
  });
  a.record.deferrals?.push({ operationId: ID, at: at + 5 });
  a.record.reports.push({ operationId: ID, phase: "DEFERRED", version: OLD, at: at + 5 });
}

describe("the deferral oracle against planted defects", () => {
  it("sees a node offered for three hours after a max defer of 20 minutes (no bound past the max defer)", () => {
    const a = testAgent("n1", { connected: true });
    // Busy for three hours; the engine kept offering it every two minutes instead of skipping
    // it at 20 minutes (its first deferral's time reset at each answer), and it finally took it.
    for (let t = 0; t < 180 * MIN; t += 2 * MIN) defers(a, t);
    a.applied.set(ID, 1);
    a.version = NEW;
    const { store, fleet } = world(
      a,
      { maxDeferMs: 20 * MIN },
      {
        state: "succeeded",
        offeredAt: 180 * MIN,
        deferredAt: 178 * MIN,
        deferrals: 90,
        finishedAt: 181 * MIN,
      },
    );
    expect(deferralViolations(store, fleet)).not.toEqual([]);
  });

  it("sees a node skipped deferred two minutes after its first deferral in a campaign without --max-defer (default 1 h)", () => {
    const a = testAgent("n1", { connected: true });
    defers(a, 0);
    defers(a, MIN);
    const { store, fleet } = world(
      a,
      {},
      {
        state: "skipped",
        code: "deferred",
        offeredAt: MIN,
        deferredAt: 5,
        deferrals: 2,
        finishedAt: 2 * MIN,
      },
    );
    expect(deferralViolations(store, fleet).join("\n")).toMatch(/^DF2: n1 was skipped deferred/m);
  });

  it("sees the same early skip when the campaign names its max defer (the oracle reads the spec)", () => {
    const a = testAgent("n1", { connected: true });
    defers(a, 0);
    defers(a, MIN);
    const { store, fleet } = world(
      a,
      { maxDeferMs: 60 * MIN },
      {
        state: "skipped",
        code: "deferred",
        offeredAt: MIN,
        deferredAt: 5,
        deferrals: 2,
        finishedAt: 2 * MIN,
      },
    );
    expect(deferralViolations(store, fleet).join("\n")).toMatch(/^DF2: n1 was skipped deferred/m);
  });
});
