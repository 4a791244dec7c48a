/**
 * The Control processes serving one database (`control_instances`), and the sweep that keeps
 * the node registry's `online`/`held_by` true when one of them is gone.
 *
 * Each Control registers a row under its instance id with the backend pid of a connection it
 * holds for that purpose only, and stamps `seen_at` on it every `heartbeatMs`. An instance is
 * live while that backend exists (`pg_stat_activity`: a killed process's session ends at
 * once, as the lease relies on too) and its `seen_at` is younger than `staleAfterMs` (a hung
 * process). After each heartbeat the Control sweeps: rows of instances that are not live are
 * deleted, and nodes online but held by no live instance are marked offline (their ids
 * notified on the nodes channel), so every Control's facts may trust an online row held by
 * another instance. Nothing else is shared between Controls: no consensus, no gossip.
 *
 * A Control never marks offline the nodes of another live Control (at start it sweeps only
 * what dead instances held). If its own row was swept while it lived (its connection broke,
 * or it stalled past `staleAfterMs`), its next heartbeat registers it again and claims back
 * the nodes whose streams it still holds (matched on session id, as stream ends are).
 */
import type pg from "pg";
import type { Logger } from "../log.js";
import { notifyNodeIds } from "./notify-sql.js";

/** A stream this Control holds: the node and the session on record for it. */
export interface HeldStream {
  readonly nodeId: string;
  readonly sessionId: string;
}

/** Options of {@link ControlInstances}. */
export interface ControlInstancesOptions {
  readonly pool: pg.Pool;
  /** This process's instance id (the nodes' `held_by`, the lease's holder). */
  readonly instanceId: string;
  /** For people reading the table: host and process id. */
  readonly name: string;
  readonly log: Logger;
  /** How often `seen_at` is stamped and dead instances swept. */
  readonly heartbeatMs: number;
  /** An instance not seen for this long is gone, even with its connection open. */
  readonly staleAfterMs: number;
  /** The streams this Control holds now (claimed back after its row was swept). */
  readonly heldStreams: () => Iterable<HeldStream>;
}

/** This Control's row in `control_instances`, its heartbeat and the sweep; see the file's TSDoc. */
export class ControlInstances {
  private client: pg.PoolClient | undefined;
  private broken = false;
  private timer: NodeJS.Timeout | undefined;
  private beating: Promise<void> = Promise.resolve();
  private stopped = false;
  private registered = false;

  constructor(private readonly o: ControlInstancesOptions) {}

  /** Registers this Control, sweeps what dead instances held, and starts the heartbeat. */
  async start(): Promise<void> {
    await this.beat();
    if (!this.registered) throw new Error("could not register this Control in control_instances");
    this.schedule();
  }

  /**
   * One heartbeat: stamps this Control's row (registering it again, and claiming its streams
   * back, when it was swept), then sweeps. Never rejects; a failure is logged and the next
   * heartbeat tries again.
   */
  beat(): Promise<void> {
    this.beating = this.beating.then(async () => {
      try {
        await this.stamp();
        await this.sweep();
      } catch (error) {
        this.o.log.warn({ err: (error as Error).message }, "control instance heartbeat failed");
      }
    });
    return this.beating;
  }

  /**
   * Deletes the rows of instances that are gone and marks offline the nodes held by no live
   * instance. @returns how many nodes it marked offline.
   */
  async sweep(): Promise<number> {
    const result = await this.o.pool.query<{ swept: number }>(
      `with live as (
         select i.id from control_instances i
          where i.seen_at > now() - $1 * interval '1 millisecond'
            and exists (select 1 from pg_stat_activity a where a.pid = i.backend_pid)
       ), gone as (
         delete from control_instances i where i.id not in (select id from live)
       ), v as (
         select n.id, n.held_by from nodes n
          where n.online and (n.held_by is null or n.held_by not in (select id from live))
       ), locked as materialized (
         select nodes.id from nodes where nodes.id in (select v.id from v) order by nodes.id
         for update of nodes
       ), changed as (
         update nodes set online = false, held_by = null
           from v join locked on locked.id = v.id
          where nodes.id = v.id and nodes.online and nodes.held_by is not distinct from v.held_by
         returning nodes.id
       ), notified as (${notifyNodeIds("changed")})
       select (select count(*)::int from changed) as swept,
              (select notified from notified) as notified`,
      [this.o.staleAfterMs],
    );
    const swept = result.rows[0]?.swept ?? 0;
    if (swept > 0)
      this.o.log.info({ nodes: swept }, "marked offline the nodes of Controls that are gone");
    return swept;
  }

  /** Stops the heartbeat, deletes this Control's row and gives its connection back. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    await this.beating;
    await this.o.pool
      .query("delete from control_instances where id = $1", [this.o.instanceId])
      .catch((error: unknown) =>
        this.o.log.warn({ err: (error as Error).message }, "could not remove this Control's row"),
      );
    this.drop(this.broken);
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.beat().then(() => this.schedule());
    }, this.o.heartbeatMs);
    this.timer.unref();
  }

  private drop(destroy: boolean): void {
    const c = this.client;
    this.client = undefined;
    c?.release(destroy ? new Error("instance connection dropped") : undefined);
  }

  /** Stamps the row over the dedicated connection; claims streams back when it was swept. */
  private async stamp(): Promise<void> {
    let fresh = false;
    if (this.client === undefined || this.broken) {
      this.drop(true);
      this.broken = false;
      const c = await this.o.pool.connect();
      c.on("error", () => {
        this.broken = true;
      });
      this.client = c;
      fresh = true;
    }
    let inserted: boolean;
    try {
      const result = await this.client.query<{ inserted: boolean }>(
        `insert into control_instances (id, backend_pid, name, started_at, seen_at)
         values ($1, pg_backend_pid(), $2, now(), now())
         on conflict (id) do update set backend_pid = excluded.backend_pid,
           seen_at = excluded.seen_at
         returning (xmax = 0) as inserted`,
        [this.o.instanceId, this.o.name],
      );
      inserted = result.rows[0]?.inserted ?? false;
    } catch (error) {
      this.broken = true;
      throw error;
    }
    const first = !this.registered;
    this.registered = true;
    // Between a lost connection (or a stall) and now, others may have swept this Control's
    // nodes offline: claim back the streams it still holds.
    if (!first && (inserted || fresh)) {
      if (inserted) this.o.log.warn("this Control's instance row had been swept; registered again");
      await this.claim();
    }
  }

  /** Marks the streams this Control holds online and held by it again; notifies their ids. */
  private async claim(): Promise<void> {
    const held = [...this.o.heldStreams()];
    if (held.length === 0) return;
    await this.o.pool.query(
      `with v as (
         select * from unnest($2::text[], $3::text[]) as v(id, session_id)
       ), locked as materialized (
         select nodes.id from nodes where nodes.id in (select v.id from v) order by nodes.id
         for update of nodes
       ), changed as (
         update nodes set online = true, held_by = $1
           from v join locked on locked.id = v.id
          where nodes.id = v.id and nodes.session_id = v.session_id
            and (not nodes.online or nodes.held_by is distinct from $1)
         returning nodes.id
       ) ${notifyNodeIds("changed")}`,
      [this.o.instanceId, held.map((h) => h.nodeId), held.map((h) => h.sessionId)],
    );
  }
}
