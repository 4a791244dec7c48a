/**
 * What a run leaves behind: how each campaign and each agent ended (what I9 compares), and the
 * trace lines of what changed at each step.
 */
import type { CampaignState } from "../control/campaign/index.js";
import type { MemoryCampaignStore } from "../control/campaign-store/index.js";
import type { SimFleet } from "./agents.js";

/** How each campaign ended, and where each node ended: what faults must not change (I9). */
export interface Outcome {
  readonly campaigns: Record<string, { phase: string; code: string; batches: string[] }>;
  /** Per agent: the version it ends on, and how the batch it was in (if any) ended. */
  readonly nodes: Record<string, { readonly version: string; readonly batch: string }>;
}

/** Adds a trace line for every node or campaign phase that changed since the last step. */
export function traceChanges(
  store: MemoryCampaignStore,
  snapshot: Map<string, Map<string, string>>,
  say: (line: string) => void,
): void {
  for (const [id, c] of store.tables.campaigns) {
    let seen = snapshot.get(id);
    if (seen === undefined) {
      seen = new Map();
      snapshot.set(id, seen);
    }
    const phase = `${c.campaign.phase} batch ${c.campaign.currentBatch + 1}`;
    if (seen.get("") !== phase) say(`${id}: ${phase}`);
    seen.set("", phase);
    for (const n of store.tables.nodes.get(id) ?? []) {
      const state = `${n.state}${n.code ? `/${n.code}` : ""}`;
      if (seen.get(n.nodeId) !== state) say(`${id} ${n.nodeId} (batch ${n.batch + 1}) → ${state}`);
      seen.set(n.nodeId, state);
    }
  }
}

export function outcomeOf(store: MemoryCampaignStore, fleet: SimFleet): Outcome {
  const campaigns: Outcome["campaigns"] = {};
  for (const [id, c] of store.tables.campaigns) {
    const s: CampaignState = c.campaign;
    campaigns[id] = { phase: s.phase, code: s.code ?? "", batches: s.batches.map((b) => b.state) };
  }
  const nodes: Outcome["nodes"] = {};
  for (const [id, a] of fleet.agents) nodes[id] = { version: a.version, batch: "" };
  for (const [id, c] of store.tables.campaigns) {
    for (const n of store.tables.nodes.get(id) ?? []) {
      const node = nodes[n.nodeId];
      if (node) nodes[n.nodeId] = { ...node, batch: c.campaign.batches[n.batch]?.state ?? "" };
    }
  }
  return { campaigns, nodes };
}
