/**
 * The campaign side of a hand-built world for the oracle tests: one campaign `c0` over some
 * simulated agents in one batch, upgrading them from {@link OLD} to {@link NEW}, stored in a
 * memory campaign store with its campaign and node records patched as a test needs. What the
 * agents did (their record) each test writes itself: that is what the oracle judges.
 */
import {
  type CampaignNode,
  type CampaignSpecInput,
  type CampaignState,
  createCampaign,
  planCampaign,
  resolveSpec,
} from "../../control/campaign/index.js";
import { MemoryCampaignStore } from "../../control/campaign-store/index.js";
import { ManualClock } from "../../control/manual-clock.js";
import type { SimAgent } from "../../simulation/agent-script.js";
import type { SimFleet } from "../../simulation/agents.js";

/** The version every agent starts on. */
export const OLD = "1.0.0";
/** The campaign's target. */
export const NEW = "2.0.0";

/** What {@link oneBatchCampaign} built. */
export interface OneBatchCampaign {
  readonly store: MemoryCampaignStore;
  /** The campaign as created (running, batch 1 not started), before any patch. */
  readonly campaign: CampaignState;
  /** The agents by node id, as the oracles read the simulated fleet. */
  readonly fleet: SimFleet;
  /** Stores c0 as `campaign` patched by `c`, and every node record patched by `n`. */
  set(c?: Partial<CampaignState>, n?: Partial<CampaignNode>): void;
}

/**
 * Campaign c0 over `agents` in one batch of 100 % with no minimum duration (`spec` adds to or
 * overrides that), created by `createdBy` at 0 and stored unpatched.
 */
export function oneBatchCampaign(
  agents: readonly SimAgent[],
  spec: Partial<CampaignSpecInput> = {},
  createdBy = "operator",
): OneBatchCampaign {
  const store = new MemoryCampaignStore(new ManualClock(0));
  const resolved = resolveSpec({
    targetVersion: NEW,
    batches: [{ percent: 100, minDurationMs: 0 }],
    ...spec,
  });
  const candidates = agents.map((a) => ({
    id: a.script.id,
    labels: {},
    pool: "",
    enabled: true,
    everConnected: true,
    capabilities: ["upgrade.v1"],
    agentVersion: OLD,
  }));
  const { campaign, nodes } = createCampaign({
    id: "c0",
    spec: resolved,
    plan: planCampaign(resolved, candidates),
    target: { version: NEW, sequence: 2 },
    now: 0,
  });
  const set = (c: Partial<CampaignState> = {}, n: Partial<CampaignNode> = {}) => {
    store.tables.campaigns.set("c0", {
      campaign: { ...campaign, ...c },
      targetVersion: NEW,
      createdBy,
      createdAt: 0,
      updatedAt: new Date(0),
      version: 1,
    });
    store.tables.nodes.set(
      "c0",
      nodes.map((x) => ({ ...x, ...n })),
    );
  };
  set();
  const fleet = { agents: new Map(agents.map((a) => [a.script.id, a])) } as unknown as SimFleet;
  return { store, campaign, fleet, set };
}

/** The patch of a campaign that completed at 100 with every batch passed. */
export function completedAt100(campaign: CampaignState): Partial<CampaignState> {
  return {
    phase: "completed",
    finishedAt: 100,
    batches: campaign.batches.map((b) => ({ ...b, state: "passed", startedAt: 0, endedAt: 100 })),
  };
}
