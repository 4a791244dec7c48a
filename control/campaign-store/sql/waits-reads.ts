/**
 * The reads behind "what does the current batch wait for" (`waitsFor`): which of some nodes
 * have a stream now, who paused the campaign, the current batch's gate results and the
 * fleet-wide load of its pools. Reads only, on any Control (not only the leader).
 */
import type { GateResult, PauseInfo, PoolLoad } from "../../campaign/index.js";
import { readGateResults } from "./gates.js";
import { poolLoads, type Queryable } from "./reads.js";

/** What {@link readWaitFacts} found. */
export interface WaitFacts {
  /** The given node ids whose registry row says a stream is open on some Control. */
  readonly online: ReadonlySet<string>;
  /** The actor and reason of the pause command that opened the current pause, if one did. */
  readonly pause: Omit<PauseInfo, "at"> | undefined;
  readonly gates: readonly GateResult[];
  readonly pools: ReadonlyMap<string, PoolLoad>;
}

/**
 * What the waits of `campaignId`'s batch `batch` read, at `now` (epoch ms). `pausedAt`: the
 * campaign's open pause, if any (a pause a breach opened has no command, hence no actor).
 */
export async function readWaitFacts(
  q: Queryable,
  campaignId: string,
  batch: number,
  nodeIds: readonly string[],
  pools: readonly string[],
  now: number,
  pausedAt: number | undefined,
): Promise<WaitFacts> {
  const online =
    nodeIds.length === 0
      ? []
      : (
          await q.query<{ id: string }>(
            "select id from nodes where online and id = any($1::text[])",
            [nodeIds],
          )
        ).rows.map((r) => r.id);
  const pause =
    pausedAt === undefined
      ? { rows: [] }
      : await q.query<{ actor: string; reason: string }>(
          `select actor, reason from campaign_commands
            where campaign_id = $1 and kind = 'pause' and outcome = 'applied'
              and applied_at >= $2
            order by id desc limit 1`,
          [campaignId, new Date(pausedAt)],
        );
  const row = pause.rows[0];
  return {
    online: new Set(online),
    pause: row === undefined ? undefined : { by: row.actor, reason: row.reason },
    gates: await readGateResults(q, campaignId, batch),
    pools: await poolLoads(q, pools, campaignId, now),
  };
}
