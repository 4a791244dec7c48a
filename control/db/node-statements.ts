/**
 * The SQL statements of the node registry's hot paths ({@link NodeStore}) and how their
 * parameters are laid out.
 */
import { NODES_CHANNEL } from "../shared/notify-channels.js";
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
 * The Hello write of {@link NodeStore.recordHello} for many nodes, one row of `v` per node,
 * rows locked in id order first ({@link LOCK_IN_ID_ORDER}); `$14` is the holder. It notifies
 * the ids it changed.
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
    update nodes set labels = v.labels::jsonb, pool = v.pool, platform = v.platform,
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

/** How an enrollment's re-enrollment was allowed, from `$14` (the grant) and the node's prior reset. */
const VIA = `coalesce($14::text, case when (select was_reset from prior) then 'reset'
      else 'enrollment_key' end)`;

/**
 * The enrollment of {@link NodeStore.enroll}: `$1`–`$9` the Hello ({@link helloParams}),
 * `$10` now, `$11` the token hash, `$12` the join token, `$13` the session, `$14` the grant,
 * `$15` the peer, `$16` the holder, `$17` the enrollment key's hash. Returns one row
 * (`created`, `via`) when it enrolled, none when the node exists and nothing lets it
 * re-enroll.
 */
export const ENROLL_SQL = `with prior as (
         select reset_at is not null as was_reset from nodes where id = $1
       ), enrolled as (
         insert into nodes (id, labels, pool, platform, agent_version, previous_version, boot_id,
            capabilities, confirmed_sequence, first_seen, last_seen, online, token_hash,
            token_issued_at, join_token_id, session_id, created_at, updated_at, held_by,
            enrollment_key_hash)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10, true, $11, $10, $12, $13, $10, $10,
            $16::text, $17::text)
         on conflict (id) do update set
            labels = excluded.labels, pool = excluded.pool, platform = excluded.platform,
            agent_version = excluded.agent_version,
            previous_version = excluded.previous_version,
            boot_id = excluded.boot_id, capabilities = excluded.capabilities,
            confirmed_sequence = greatest(nodes.confirmed_sequence, excluded.confirmed_sequence),
            last_seen = excluded.last_seen, online = true, token_hash = excluded.token_hash,
            token_issued_at = excluded.token_issued_at, join_token_id = excluded.join_token_id,
            session_id = excluded.session_id, reset_at = null, version = nodes.version + 1,
            updated_at = excluded.updated_at, held_by = excluded.held_by,
            enrollment_key_hash = excluded.enrollment_key_hash
         where $14::text is not null or nodes.reset_at is not null
            or ($17::text is not null and nodes.enrollment_key_hash = $17::text
                and nodes.join_token_id = $12::text)
         returning id, (xmax = 0) as created
       ), notified as (
         select pg_notify('${NODES_CHANNEL}', id) from enrolled
       ), audited as (
         insert into audit_events (time, actor, actor_ip, action, node_id, message, detail)
         select $10, 'join-token:' || $12::text, $15::text, 'node.reenroll', $1::text,
           'node ' || $1::text || ' re-enrolled with join token ' || $12::text || ' from '
             || $15::text || ' ('
             || case ${VIA} when 'named' then 'a token for named node ids'
                  when 'allow_reenroll' then 'a token allowing re-enrollment'
                  when 'enrollment_key' then 'the same enrollment key: the Welcome of its '
                    || 'enrollment was lost'
                  else 'after an operator reset' end || ')',
           jsonb_build_object('joinTokenId', $12::text, 'peer', $15::text, 'via', ${VIA})
         from enrolled where not enrolled.created
       )
       select created, ${VIA} as via, (select count(*) from notified) as notified from enrolled`;
