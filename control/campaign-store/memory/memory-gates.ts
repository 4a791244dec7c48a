/**
 * The memory store's table of outside health gate results: the latest result per campaign,
 * batch and gate, with the SQL adapter's semantics (`sql/gates.ts`).
 */
import type { GateResult } from "../../campaign/index.js";
import type { GateResultWrite } from "../port.js";

/** Gate results by campaign, batch and gate. */
export class MemoryGateResults {
  private readonly rows = new Map<string, GateResult & { readonly campaignId: string }>();

  /** Stores a result per `CampaignStore.recordGateResult` (the caller checks the campaign exists). */
  record(w: GateResultWrite): void {
    const key = `${w.campaignId}\u0000${w.batch}\u0000${w.gate}`;
    const old = this.rows.get(key);
    const at = w.at.getTime();
    if (old?.status === "fail" && old.at > (w.keepFailuresAfter ?? 0)) return;
    const unreachableSince =
      w.status !== "unreachable"
        ? undefined
        : old?.status === "unreachable"
          ? (old.unreachableSince ?? old.at)
          : at;
    this.rows.set(key, {
      campaignId: w.campaignId,
      batch: w.batch,
      gate: w.gate,
      status: w.status,
      at,
      value: w.value,
      message: w.message,
      unreachableSince,
    });
  }

  /** The results of a campaign's batch, by gate (copies). */
  read(campaignId: string, batch: number): GateResult[] {
    const out: GateResult[] = [];
    for (const r of this.rows.values()) {
      if (r.campaignId !== campaignId || r.batch !== batch) continue;
      const { campaignId: _, ...result } = r;
      out.push(result);
    }
    return out.sort((a, b) => a.gate - b.gate);
  }
}
