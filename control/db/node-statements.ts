/**
 * The SQL statements of the node registry's hot paths ({@link NodeStore}) and how their
 * parameters are laid out.
 */
import type { NodeHello } from "./node-hello.js";
import { notifyNodeIds } from "./notify-sql.js";

/** A Hello to record, as one call of {@link NodeStore.recordHello}. */
export interface HelloWrite {
  readonly hello: NodeHello;
  readonly sessionId: string;
  readonly now: Date;
}

/**
 * A `locked` CTE locking the node rows named in a CTE `v`, in id order, before the
 * statement that joins it updates any of them. Every statement here that updates many node
 * rows locks them this way, so two of them running at once (Hello batches, liveness
 * flushes) never wait on each other in a cycle: no deadlock. Joining `locked` makes it run.
 */
export const LOCK_IN_ID_ORDER = `locked as materialized (
  select nodes.id from nodes where nodes.id in (select v.id from v) order by nodes.id
  for update of nodes
)`;

/**
 * SQL of a node's pool from its effective labels `labels` (a jsonb expression): its `pool`
 * label, or "default" when absent or empty.
 */
export function poolOf(labels: string): string {
  return `coalesce(nullif((${labels})->>'pool', ''), 'default')`;
}

/**
 * The Hello write of {@link NodeStore.recordHello} for many nodes, one row of `v` per node,
 * rows locked in id order first ({@link LOCK_IN_ID_ORDER}); `$14` is the holder. It notifies
 * the ids it changed. The labels written are the reported ones (already filtered to the
 * agent-reported keys) overlaid with the node's assigned labels, which always win.
 */
export const HELLO_BATCH_SQL = `
  with v as (
    select * from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[],
        $6::text[], $7::text[], $8::text[], $9::bigint[], $10::timestamptz[],
        $11::timestamptz[], $12::text[], $13::integer[])
      as v(id, labels, pool, platform, agent_version, previous_version, boot_id, capabilities,
        confirmed_sequence, first_now, now, session_id, hellos)
  ), ${LOCK_IN_ID_ORDER}
  , changed as (
    update nodes set labels = v.labels::jsonb || nodes.assigned_labels,
        pool = ${poolOf("v.labels::jsonb || nodes.assigned_labels")}, platform = v.platform,
        agent_version = v.agent_version, previous_version = v.previous_version,
        boot_id = v.boot_id, capabilities = v.capabilities::jsonb,
        confirmed_sequence = greatest(nodes.confirmed_sequence, v.confirmed_sequence),
        first_seen = coalesce(nodes.first_seen, v.first_now), last_seen = v.now, online = true,
        held_by = $14::text, session_id = v.session_id, version = nodes.version + v.hellos,
        updated_at = v.now, enrollment_key_hash = null
    from v join locked on locked.id = v.id
    where nodes.id = v.id
    returning nodes.id
  ) ${notifyNodeIds("changed")}`;

/**
 * The parameters of {@link HELLO_BATCH_SQL}: one row per node (an `update … from` joining
 * a node twice would apply only one of its rows). Several Hellos of a node fold into what
 * recording them in order would leave: the last one's facts, session and time, the highest
 * confirmed sequence, the first one's time as a first sighting, a version bump per Hello.
 * Labels and capabilities travel as JSON text: their arrays are ragged, which a
 * two-dimensional array parameter cannot hold.
 */
export function helloBatchParams(writes: readonly HelloWrite[]): unknown[][] {
  const nodes = new Map<string, { first: HelloWrite; last: HelloWrite; top: number; n: number }>();
  for (const write of writes) {
    const seen = nodes.get(write.hello.nodeId);
    if (seen) {
      seen.last = write;
      seen.top = Math.max(seen.top, write.hello.confirmedSequence);
      seen.n += 1;
    } else {
      nodes.set(write.hello.nodeId, {
        first: write,
        last: write,
        top: write.hello.confirmedSequence,
        n: 1,
      });
    }
  }
  const rows = [...nodes.values()].map(({ first, last, top, n }) => [
    ...helloParams({ ...last.hello, confirmedSequence: top }),
    first.now,
    last.now,
    last.sessionId,
    n,
  ]);
  const columns = 13;
  return Array.from({ length: columns }, (_, c) => rows.map((row) => row[c]));
}

/** True for a PostgreSQL data exception (SQLSTATE class 22), caused by a value sent. */
export function isDataError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && code.startsWith("22");
}

/**
 * A Hello's columns as statement parameters `$1`–`$9`: id, labels (JSON), pool, platform,
 * agent version, previous version, boot id, capabilities (JSON), confirmed sequence. Every
 * statement that writes a Hello (batches, enrollments, certificate Hellos) lays them out so.
 */
export function helloParams(hello: NodeHello): unknown[] {
  return [
    hello.nodeId,
    JSON.stringify(hello.labels),
    hello.pool,
    hello.platform,
    hello.agentVersion,
    hello.previousVersion,
    hello.bootId,
    JSON.stringify(hello.capabilities),
    hello.confirmedSequence,
  ];
}
