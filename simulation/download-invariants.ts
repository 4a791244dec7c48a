/**
 * The download budget's invariant, judged from the simulated agents' own record of their
 * downloads (`ground-truth.ts`), never from the engine's functions or Control's node states:
 *
 * - B4 (download budget): at no instant do more agents download the artifact of a campaign
 *   with `maxDownloads N` than N. Checked when each download begins, against the downloads of
 *   the same campaign still running then (a download that ended at that instant is not).
 */
import type { MemoryCampaignStore } from "../control/campaign-store/index.js";
import type { SimFleet } from "./agents.js";
import type { DownloadRecord } from "./ground-truth.js";

/** What B4 remembers between steps: per agent, how many of its downloads were checked. */
export interface DownloadCheckState {
  readonly checked: Map<string, number>;
  /** The most downloads seen at once per campaign (for the tests: the rule was reached). */
  readonly peak: Map<string, number>;
}

/** A fresh state. */
export function newDownloadCheckState(): DownloadCheckState {
  return { checked: new Map(), peak: new Map() };
}

const during = (d: DownloadRecord, t: number) => d.from <= t && (d.to === undefined || d.to > t);

/** Every B4 violation among the downloads begun since the last call. */
export function downloadViolations(
  store: MemoryCampaignStore,
  fleet: SimFleet,
  state: DownloadCheckState,
): string[] {
  const fresh: DownloadRecord[] = [];
  for (const [nodeId, a] of fleet.agents) {
    const list = a.record.downloads;
    for (let i = state.checked.get(nodeId) ?? 0; i < list.length; i++)
      fresh.push(list[i] as DownloadRecord);
    state.checked.set(nodeId, list.length);
  }
  const out: string[] = [];
  for (const begun of fresh) {
    const max = store.tables.campaigns.get(begun.campaignId)?.campaign.spec.maxDownloads;
    const at = begun.from;
    const running: string[] = [];
    for (const [nodeId, a] of fleet.agents)
      for (const d of a.record.downloads)
        if (d.campaignId === begun.campaignId && during(d, at)) running.push(nodeId);
    const peak = state.peak.get(begun.campaignId) ?? 0;
    state.peak.set(begun.campaignId, Math.max(peak, running.length));
    if (max !== undefined && running.length > max)
      out.push(
        `B4: ${running.length} agents downloading ${begun.campaignId}'s artifact at ${at} ms (${running.slice(0, 5).join(", ")}), over its max downloads of ${max}`,
      );
  }
  return out;
}
