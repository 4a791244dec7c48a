/**
 * The claim invariants (O6–O11) on hand-built worlds: each breaks when Control's claim
 * contradicts the agents' record, the operator's log or the world's configuration, and holds
 * when it does not.
 */
import { describe, expect, it } from "vitest";
import type { CampaignState } from "../../control/campaign/index.js";
import { MemoryFleetStore } from "../../control/campaign-store/index.js";
import type { SimAgent } from "../../simulation/agent-script.js";
import {
  type ClaimWorld,
  claimEndViolations,
  claimViolations,
  newClaimCheckState,
} from "../../simulation/claim-invariants.js";
import type { IssuedCommand } from "../../simulation/outcome-world.js";
import { NEW, OLD, oneBatchCampaign } from "./hand-built-world.js";
import { testAgent } from "./test-agent.js";

/** A world of `agents` with campaign `c0` over them (one batch) and release NEW for amd64. */
function world(agents: SimAgent[], commands: IssuedCommand[] = []) {
  const { store, campaign, fleet, set } = oneBatchCampaign(agents, {
    gates: [{ kind: "webhook", url: "http://gate.sim/0/0" }],
    gateGraceMs: 60_000,
  });
  const fleetStore = new MemoryFleetStore(store);
  store.tables.releases.set(NEW, {
    version: NEW,
    sequence: 2,
    envelope: { payloadType: "", payload: new Uint8Array(), signatures: [] },
    artifacts: [{ platform: "linux-amd64", sha256: "0".repeat(64), size: 1, url: "" }],
  });
  for (const a of agents)
    store.putNode({
      id: a.script.id,
      pool: "",
      boot_id: `${a.script.id}:boot-0`,
      agent_version: OLD,
      capabilities: ["upgrade.v1"],
      platform: a.script.platform ?? "linux-amd64",
      enabled: true,
      last_seen: null,
      labels: {},
      confirmed_sequence: 1,
    });
  const w: ClaimWorld = {
    store,
    fleetStore,
    fleet,
    commands,
    maxBatches: 10,
    platform: "linux-amd64",
    state: newClaimCheckState(),
  };
  return { w, set, campaign, store, fleetStore };
}

const abortWithRollback: IssuedCommand = {
  campaignId: "c0",
  kind: "abort",
  at: 50,
  rollback: true,
  phase: "running",
};

describe("O6: only a breach ends rolled_back", () => {
  it("breaks when a campaign the operator aborted with rollback while running ends rolled_back", () => {
    const { w, set } = world([testAgent("n1")], [abortWithRollback]);
    set({ phase: "rolled_back", rollbackCause: "abort" });
    expect(claimViolations(w, 100).join("\n")).toMatch(/^O6: c0 ended rolled_back/m);
  });

  it("holds when it ends aborted, or when the abort came while a breach was rolling back", () => {
    const aborted = world([testAgent("n1")], [abortWithRollback]);
    aborted.set({ phase: "aborted", code: "aborted", rollbackCause: "abort" });
    expect(claimViolations(aborted.w, 100)).toEqual([]);
    const late = world([testAgent("n1")], [{ ...abortWithRollback, phase: "rolling_back" }]);
    late.set({ phase: "rolled_back", rollbackCause: "breach" });
    expect(claimViolations(late.w, 100)).toEqual([]);
  });
});

describe("O7: an agent of a platform the release lacks is never offered nor failed", () => {
  it("breaks when such an agent counts as failed, or is sent the upgrade", () => {
    const arm = testAgent("n1", { platform: "linux-arm64" });
    const { w, set } = world([arm]);
    arm.record.sent.push({
      id: "c0/n1/upgrade",
      campaignId: "c0",
      kind: "upgrade",
      version: NEW,
      sequence: 2,
      at: 10,
      agentVersion: OLD,
      agentConfirmed: 1,
    });
    set({}, { state: "failed", code: "offer_failed" });
    const found = claimViolations(w, 100).join("\n");
    expect(found).toMatch(/^O7: n1 \(linux-arm64, which 2\.0\.0 lacks\) counts as failed/m);
    expect(found).toMatch(/^O7: n1 .* was sent c0's upgrade$/m);
  });

  it("holds when it is skipped, and for an agent of the release's platform that failed", () => {
    const { w, set } = world([testAgent("n1", { platform: "linux-arm64" })]);
    set({}, { state: "skipped", code: "platform_unsupported" });
    expect(claimViolations(w, 100)).toEqual([]);
    const amd = world([testAgent("n2")]);
    amd.set({}, { state: "failed", code: "apply_failed" });
    expect(claimViolations(amd.w, 100)).toEqual([]);
  });
});

describe("O8: a desired version recorded from a campaign worked on one agent", () => {
  const desired = (fleetStore: MemoryFleetStore) =>
    fleetStore.tables.desired.set("d1", {
      id: "d1",
      setBy: "campaign:c0",
      setAt: 100,
      target: { version: NEW, sequence: 2 },
    } as never);

  it("breaks when no agent of the campaign ran the target when confirmed", () => {
    const { w, fleetStore } = world([testAgent("n1")]);
    desired(fleetStore);
    expect(claimViolations(w, 100).join("\n")).toMatch(/^O8: d1 records 2\.0\.0 as desired/m);
  });

  it("holds when one did", () => {
    const a = testAgent("n1");
    const { w, fleetStore } = world([a]);
    a.record.runs.push({ version: NEW, at: 20 });
    a.record.sent.push({
      id: "c0/n1/confirm",
      campaignId: "c0",
      kind: "confirm",
      version: NEW,
      sequence: 2,
      at: 50,
      agentVersion: NEW,
      agentConfirmed: 1,
    });
    desired(fleetStore);
    expect(claimViolations(w, 100)).toEqual([]);
  });
});

describe("O9: Control's confirmed sequence is the agent's once it reported CONFIRMED", () => {
  it("breaks when Control's record lags, holds when it is raised", () => {
    const a = testAgent("n1");
    const { w, store } = world([a]);
    a.confirmedSequence = 2;
    a.record.reports.push({
      operationId: "c0/n1/confirm",
      phase: "CONFIRMED",
      version: NEW,
      at: 9,
    });
    expect(claimEndViolations(w).join("\n")).toMatch(
      /^O9: Control records confirmed sequence 1 for n1, whose agent confirmed 2$/m,
    );
    const row = store.tables.registry.get("n1");
    store.tables.registry.set("n1", { ...row, confirmed_sequence: 2 } as never);
    expect(claimEndViolations(w)).toEqual([]);
  });
});

describe("O10: no campaign has more batches than the policy allows", () => {
  it("breaks at eleven batches of a limit of ten, holds at ten", () => {
    const { w, set, campaign } = world([testAgent("n1")]);
    const batch = campaign.batches[0] as CampaignState["batches"][number];
    set({ batches: Array.from({ length: 11 }, (_, index) => ({ ...batch, index })) });
    expect(claimViolations(w, 0).join("\n")).toMatch(
      /^O10: c0 has 11 batches, the policy allows 10$/m,
    );
    const ten = world([testAgent("n1")]);
    ten.set({ batches: Array.from({ length: 10 }, (_, index) => ({ ...batch, index })) });
    expect(claimViolations(ten.w, 0)).toEqual([]);
  });
});

describe("O11: after a resume, no pause on an unreachable gate within the grace", () => {
  const resume: IssuedCommand = { campaignId: "c0", kind: "resume", at: 1000 };
  const pausedOnGate = {
    phase: "paused" as const,
    message: "gate 1 of batch 1 failed: unreachable for 61 s",
  };

  it("breaks on a pause 5 s after the resume", () => {
    const { w, set } = world([testAgent("n1")], [resume]);
    claimViolations(w, 900);
    set(pausedOnGate);
    expect(claimViolations(w, 6000).join("\n")).toMatch(/^O11: c0 paused on an unreachable gate/m);
  });

  it("holds on a pause a whole grace after the resume", () => {
    const { w, set } = world([testAgent("n1")], [resume]);
    claimViolations(w, 900);
    set(pausedOnGate);
    expect(claimViolations(w, 61_000)).toEqual([]);
  });
});
