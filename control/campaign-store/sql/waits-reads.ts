/**
 * The reads behind "what does the current batch wait for" (`waitsFor`): which of some nodes
 * have a stream now, who paused the campaign, the current batch's gate results, the
 * fleet-wide load of its pools and the latest phases of some upgrade operations. Reads only,
 * on any Control (not only the leader).
 */
import type { GateResult, ObservedPhase, PauseInfo, PoolLoad } from "../../campaign/index.js";
import { isObservedPhase } from "../rows.js";
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
  /** The latest reported phase of each given upgrade operation that has a report. */
  readonly upgradePhases: ReadonlyMap<string, ObservedPhase>;
}

/**
 * What the waits of `campaignId`'s batch `batch` read, at `now` (epoch ms). `pausedAt`: the
 * campaign's open pause, if any (a pause a breach opened has no command, hence no actor).
 * `upgradeOperationIds`: the upgrade operations whose latest report the download budget reads.
 */
export async function readWaitFacts(
  q: Queryable,
  campaignId: string,
  batch: number,
  nodeIds: readonly string[],
  pools: readonly string[],
  now: number,
  pausedAt: number | undefined,
  upgradeOperationIds: readonly string[] = [],
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
  const phases =
    upgradeOperationIds.length === 0
      ? []
      : (
          await q.query<{ id: string; report_phase: string }>(
            `select id, report_phase from campaign_operations
              where campaign_id = $1 and id = any($2::text[]) and report_phase is not null`,
            [campaignId, upgradeOperationIds],
          )
        ).rows;
  const upgradePhases = new Map<string, ObservedPhase>();
  for (const p of phases)
    if (isObservedPhase(p.report_phase)) upgradePhases.set(p.id, p.report_phase);
  return {
    online: new Set(online),
    pause: row === undefined ? undefined : { by: row.actor, reason: row.reason },
    gates: await readGateResults(q, campaignId, batch),
    pools: await poolLoads(q, pools, campaignId, now),
    upgradePhases,
  };
}
