/**
 * The SQL of outside health gate results (`campaign_gate_results`, migration 0008): one row per
 * campaign, batch and gate, holding the latest result.
 */
import type { GateResult, GateStatus } from "../../campaign/index.js";
import type { GateResultWrite } from "../port.js";
import type { Queryable } from "./reads.js";

interface GateRow {
  batch: number;
  gate: number;
  status: string;
  at: Date;
  value: string;
  message: string;
  unreachable_since: Date | null;
}

/** The stored results of a campaign's batch, by gate. */
export async function readGateResults(
  q: Queryable,
  campaignId: string,
  batch: number,
): Promise<GateResult[]> {
  const { rows } = await q.query<GateRow>(
    `select batch, gate, status, at, value, message, unreachable_since
       from campaign_gate_results where campaign_id = $1 and batch = $2 order by gate`,
    [campaignId, batch],
  );
  return rows.map((r) => ({
    batch: r.batch,
    gate: r.gate,
    status: r.status as GateStatus,
    at: r.at.getTime(),
    value: r.value,
    message: r.message,
    unreachableSince: r.unreachable_since?.getTime() ?? undefined,
  }));
}

/**
 * Stores a result as its gate's latest (see `CampaignStore.recordGateResult`): a stored failing
 * result newer than `keepFailuresAfter` is kept; an unreachable result keeps the streak's start.
 * A result for a campaign that does not exist is dropped.
 */
export async function recordGateResult(q: Queryable, w: GateResultWrite): Promise<void> {
  await q.query(
    `insert into campaign_gate_results
       (campaign_id, batch, gate, status, at, value, message, unreachable_since)
     select $1, $2, $3, $4, $5, $6, $7, case when $4 = 'unreachable' then $5::timestamptz end
      where exists (select 1 from campaigns where id = $1)
     on conflict (campaign_id, batch, gate) do update set
       status = excluded.status, at = excluded.at, value = excluded.value,
       message = excluded.message,
       unreachable_since = case
         when excluded.status <> 'unreachable' then null
         when campaign_gate_results.status = 'unreachable'
           then campaign_gate_results.unreachable_since
         else excluded.at end
     where not (campaign_gate_results.status = 'fail'
                and campaign_gate_results.at > $8::timestamptz)`,
    [
      w.campaignId,
      w.batch,
      w.gate,
      w.status,
      w.at,
      w.value,
      w.message,
      new Date(w.keepFailuresAfter ?? 0),
    ],
  );
}
