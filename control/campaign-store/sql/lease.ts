/**
 * The campaign worker's fenced leader lease (`control_leases` row `campaign-worker`).
 *
 * - Acquire: when the row is expired (database `now()`), or when the holder's lease
 *   connection no longer exists (`holder_pid` absent from `pg_stat_activity`: a killed
 *   Control's session is gone at once, so a restart takes over without waiting out the TTL).
 *   Every takeover increments `epoch`.
 * - Renew: every `ttlMs / 3` over the holder's own dedicated connection; a renewal that
 *   finds another holder or epoch, or a broken connection, ends the leadership at once.
 * - Take over from a live holder that knows less: with `engineFeatures` (the campaign worker's
 *   lease), the holder records the engine features it knows beside the epoch it took
 *   (`features_epoch`; a holder that records none, as the previous release, leaves it behind
 *   `epoch`), and a Control takes the lease from a live holder when an unfinished campaign
 *   records features this Control knows and the holder does not (docs/decisions.md, "Versioned
 *   engine features"). Feature lists only grow from release to release, so two Controls never
 *   take it from each other back and forth.
 * - Fence: every campaign write transaction calls {@link LeaderLease.fence} first; it takes
 *   a share lock on the row and throws {@link StaleLeaderError} unless this process holds
 *   it at its epoch, so a stale leader's writes are refused and a takeover waits for
 *   in-flight decisions to commit.
 */
import type pg from "pg";
import type { Logger } from "../../log.js";
import {
  type CampaignTransaction,
  type LeaderLease,
  type LeaseOptions,
  StaleLeaderError,
} from "../port.js";

/** The lease the campaign worker runs under. */
export const WORKER_LEASE = "campaign-worker";

/** Options of {@link createLeaderLease}. */
export interface SqlLeaseOptions extends LeaseOptions {
  readonly pool: pg.Pool;
  readonly log: Logger;
}

/** The SQL of {@link CampaignTransaction.holdsLease}: a share lock on the lease row. */
export async function holdsLease(
  q: Pick<pg.ClientBase, "query">,
  name: string,
  holder: string,
  epoch: number,
): Promise<boolean> {
  const row = await q.query(
    "select 1 from control_leases where name = $1 and holder = $2 and epoch = $3 for share",
    [name, holder, epoch],
  );
  return row.rowCount === 1;
}

/** Creates a lease handle; nothing happens until {@link LeaderLease.tick}. */
export function createLeaderLease(options: SqlLeaseOptions): LeaderLease {
  const name = options.name ?? WORKER_LEASE;
  const ttlMs = options.ttlMs;
  let epoch: number | undefined;
  let client: pg.PoolClient | undefined;
  let broken = false;
  // Listens to the held connection only while it is held: a connection handed back to the
  // pool must carry none of ours (a Control that does not lead hands it back after every
  // tick, and one listener per tick piled up on the pooled client).
  const onConnectionError = () => {
    broken = true;
  };

  const dropClient = (destroy: boolean) => {
    const c = client;
    client = undefined;
    if (!c) return;
    // A destroyed connection keeps it (an error while it closes must not go uncaught).
    if (!destroy) c.removeListener("error", onConnectionError);
    c.release(destroy ? new Error("lease connection dropped") : undefined);
  };
  const lose = (why: string) => {
    if (epoch !== undefined) {
      options.log.warn({ lease: name, epoch, why }, "leadership lost");
      options.onLost?.(why);
    }
    epoch = undefined;
    dropClient(true);
  };
  const connection = async (): Promise<pg.PoolClient> => {
    if (client && !broken) return client;
    dropClient(true);
    broken = false;
    const c = await options.pool.connect();
    c.on("error", onConnectionError);
    client = c;
    return c;
  };

  return {
    name,
    holder: options.holder,
    get epoch() {
      return epoch;
    },
    async tick() {
      try {
        const c = await connection();
        if (epoch !== undefined) {
          const renewed = await c.query(
            `update control_leases set expires_at = now() + $4 * interval '1 millisecond'
             where name = $1 and holder = $2 and epoch = $3 and holder_pid = pg_backend_pid()`,
            [name, options.holder, epoch, ttlMs],
          );
          if (renewed.rowCount !== 1) lose("another process took the lease over");
          return epoch !== undefined;
        }
        const taken = await c.query<{ epoch: string }>(
          `insert into control_leases (name, holder, holder_pid, epoch, expires_at,
              engine_features, features_epoch)
           values ($1, $2, pg_backend_pid(), 1, now() + $3 * interval '1 millisecond', $4::text[], 1)
           on conflict (name) do update set holder = excluded.holder,
             holder_pid = excluded.holder_pid, epoch = control_leases.epoch + 1,
             expires_at = excluded.expires_at, engine_features = excluded.engine_features,
             features_epoch = control_leases.epoch + 1
           where control_leases.expires_at < now()
              or not exists (select 1 from pg_stat_activity a where a.pid = control_leases.holder_pid)
              or (excluded.engine_features is not null and exists (
                    select 1 from campaigns c
                     where c.finished_at is null
                       and c.engine_features <@ excluded.engine_features
                       and not c.engine_features <@ (case
                             when control_leases.features_epoch = control_leases.epoch
                             then coalesce(control_leases.engine_features, '{}'::text[])
                             else '{}'::text[] end)))
           returning epoch`,
          [name, options.holder, ttlMs, options.engineFeatures ?? null],
        );
        const row = taken.rows[0];
        if (row) {
          epoch = Number(row.epoch);
          options.log.info({ lease: name, epoch }, "leadership acquired");
        } else {
          dropClient(false);
        }
        return epoch !== undefined;
      } catch (error) {
        lose(`lease query failed: ${(error as Error).message}`);
        return false;
      }
    },
    async fence(tx: CampaignTransaction) {
      const mine = epoch;
      if (mine === undefined) throw new StaleLeaderError("this Control does not lead");
      if (!(await tx.holdsLease(name, options.holder, mine))) {
        lose("fence refused a write");
        throw new StaleLeaderError(`lease ${name} epoch ${mine} is no longer held by this Control`);
      }
    },
    async release() {
      const mine = epoch;
      epoch = undefined;
      if (mine !== undefined && client && !broken) {
        await client
          .query(
            "update control_leases set expires_at = now() - interval '1 second' where name = $1 and holder = $2 and epoch = $3",
            [name, options.holder, mine],
          )
          .catch(() => {});
      }
      dropClient(false);
    },
  };
}
