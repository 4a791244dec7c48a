/**
 * Join-token enrollments of the node registry, written in batches: in a burst of new agents
 * (a fleet being provisioned) one statement enrolls hundreds of nodes, instead of one
 * statement, commit and notification per node, whose commits PostgreSQL serializes (a
 * transaction that notifies takes the notification queue's lock at commit).
 */
import type pg from "pg";
import type { NodeHello } from "./node-hello.js";
import { helloParams, isDataError, poolOf } from "./node-statements.js";
import { notifyNodeIds } from "./notify-sql.js";

/**
 * Why a join token may re-enroll a node that already exists: it names the node (`named`)
 * or allows re-enrollment of any node (`allow_reenroll`). Neither applies to a revoked node:
 * only an operator's reset lets it enroll again.
 */
export type ReenrollGrant = "named" | "allow_reenroll";

/**
 * What let a join token enroll a node that already exists: a grant of the token, an
 * operator's reset, or the enrollment key of the node's own unfinished enrollment (its
 * Welcome was lost before the Agent read its node token).
 */
export type ReenrollVia = ReenrollGrant | "reset" | "enrollment_key";

/** A join-token enrollment for `NodeStore.enroll`. */
export interface Enrollment {
  readonly hello: NodeHello;
  readonly sessionId: string;
  readonly joinTokenId: string;
  /** Hex SHA-256 of the new node token's secret. */
  readonly tokenHash: string;
  /** The token's leave to re-enroll an existing node; null: only a reset lets it. */
  readonly grant: ReenrollGrant | null;
  /**
   * Hex SHA-256 of the Hello's enrollment key, or null without one. A node this join token
   * enrolled with the same key, whose node token was never used since, enrolls again.
   */
  readonly enrollmentKeyHash: string | null;
  /** The stream's peer address, for the audit log. */
  readonly peer: string;
  readonly now: Date;
}

/** What `NodeStore.enroll` did. */
export type EnrollOutcome =
  /** A new node; `pending`: it awaits an administrator's approval. */
  | { readonly kind: "created"; readonly pending: boolean }
  /** An existing node re-enrolled: by the token's grant, or after an operator reset. */
  | { readonly kind: "reenrolled"; readonly via: ReenrollVia; readonly pending: boolean }
  /** The node exists and neither the token nor a reset lets it re-enroll: nothing written. */
  | { readonly kind: "refused" }
  /**
   * The join token, as committed when the enrollment was written, allows none: revoked,
   * expired, unknown (deleted), or all of its `maxUses` used. Nothing written.
   */
  | { readonly kind: "token_refused"; readonly problem: TokenRefusal; readonly maxUses: number };

/** Why the enrollment statement refused a join token. */
export type TokenRefusal = "unknown" | "revoked" | "expired" | "used_up";

/** How one enrollment of a batch fared: its outcome, or the data error its values caused. */
export type EnrollResult =
  | { readonly ok: true; readonly outcome: EnrollOutcome }
  | { readonly ok: false; readonly error: unknown };

/** How a row's re-enrollment was allowed: its grant, else the node's prior reset, else its key. */
const VIA = `coalesce(v.grant_kind, case when prior.was_reset then 'reset'
      else 'enrollment_key' end)`;

/**
 * The assigned labels a re-enrolled node keeps (in the `on conflict` update of
 * {@link ENROLL_BATCH_SQL}): all of them when the join token could have given them — it names
 * the node or allows re-enrollment (a grant), or it is the token that enrolled the node — and
 * none otherwise. A reset lets any join token enroll the id again, but the labels an
 * administrator or the old holder's token trusted it with do not pass to whoever holds some
 * other token: that enrollment carries its own token's labels only.
 */
const KEPT_LABELS = `(case when nodes.join_token_id = excluded.join_token_id
      or exists (select 1 from v where v.id = excluded.id and v.grant_kind is not null)
    then nodes.assigned_labels else '{}'::jsonb end)`;

/**
 * Enrolls the nodes of `v` (one row per node id, see {@link enrollBatchParams}; `$17` the
 * holder, `$18` whether new nodes wait for approval) in one statement, in id order so that
 * two batches never wait on each other in a cycle.
 *
 * The join tokens are locked (`for update`, in id order) and judged in the statement
 * itself, so an enrollment is checked against the token as committed when it is written:
 * a revocation or an expiry that lands while its handshake runs refuses it, and of a burst
 * of enrollments racing for a token with `max_uses`, only as many as it has uses left are
 * admitted (in id order within one statement; statements for the same token queue on its
 * lock). A use is an enrollment that creates a node or re-enrolls one by a grant or a reset;
 * the retry of a node's own enrollment (same token and enrollment key) uses none.
 *
 * A new id is inserted; an existing node is updated (token rotated, reset used up,
 * revocation cleared) only when its row's grant, the node's reset, or the same join token and
 * enrollment key allow it, and each such re-enrollment is audited. A revoked node is updated
 * only after a reset (SPEC §10: `agentctl node reset` is the only way back): neither a grant
 * nor an enrollment key lets it in, and such a refusal uses none of the token's uses. The labels written are
 * the reported ones (already filtered to the agent-reported keys) overlaid with the node's
 * assigned labels it keeps ({@link KEPT_LABELS}) and then the token's. Returns one row per row of `v`: whether it
 * enrolled (`created`, `via`), or the token's `problem` (unknown, revoked, expired,
 * used_up, with `max_uses`). The ids enrolled are notified.
 */
const ENROLL_BATCH_SQL = `with v as (
    select * from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[],
        $6::text[], $7::text[], $8::text[], $9::bigint[], $10::timestamptz[], $11::text[],
        $12::text[], $13::text[], $14::text[], $15::text[], $16::text[])
      as v(id, labels, pool, platform, agent_version, previous_version, boot_id, capabilities,
        confirmed_sequence, now, token_hash, join_token_id, session_id, grant_kind, peer,
        key_hash)
  ), tok as materialized (
    select t.id, t.uses, t.max_uses, t.revoked_at, t.expires_at, t.labels from join_tokens t
      where t.id in (select v.join_token_id from v) order by t.id for update
  ), prior as (
    select nodes.id, nodes.reset_at is not null as was_reset,
        nodes.revoked_at is not null as was_revoked, nodes.join_token_id,
        nodes.enrollment_key_hash
      from nodes join v on v.id = nodes.id
  ), judged as (
    select v.id, v.join_token_id, tok.max_uses, tok.uses, tok.labels as token_labels,
        case when tok.id is null then 'unknown' when tok.revoked_at is not null then 'revoked'
          when tok.expires_at <= v.now then 'expired' end as problem,
        (prior.id is null or prior.was_reset
          or (v.grant_kind is not null and not prior.was_revoked)) as consumes,
        (prior.id is not null and not prior.was_reset and (prior.was_revoked
          or (v.grant_kind is null
            and (v.key_hash is null or prior.enrollment_key_hash is distinct from v.key_hash
              or prior.join_token_id is distinct from v.join_token_id)))) as hopeless
      from v left join tok on tok.id = v.join_token_id left join prior on prior.id = v.id
  ), ranked as (
    select judged.*, row_number() over (partition by join_token_id order by id) as rank
      from judged where problem is null and consumes and not hopeless
  ), admitted as (
    select judged.id, judged.token_labels, judged.consumes from judged
      where problem is null and not hopeless and (not consumes or max_uses is null
        or exists (select 1 from ranked where ranked.id = judged.id
          and ranked.rank <= ranked.max_uses - ranked.uses))
  ), enrolled as (
    insert into nodes (id, labels, assigned_labels, pool, platform, agent_version,
        previous_version, boot_id, capabilities, confirmed_sequence, first_seen, last_seen,
        online, token_hash, token_issued_at, join_token_id, session_id, created_at,
        updated_at, held_by, enrollment_key_hash, pending)
    select v.id, v.labels::jsonb || a.token_labels, a.token_labels,
        ${poolOf("v.labels::jsonb || a.token_labels")}, v.platform, v.agent_version,
        v.previous_version, v.boot_id, v.capabilities::jsonb, v.confirmed_sequence, v.now,
        v.now, true, v.token_hash, v.now, v.join_token_id, v.session_id, v.now, v.now,
        $17::text, v.key_hash, $18::boolean
      from v join admitted a on a.id = v.id order by v.id
    on conflict (id) do update set
      labels = excluded.labels || ${KEPT_LABELS} || excluded.assigned_labels,
      assigned_labels = ${KEPT_LABELS} || excluded.assigned_labels,
      pool = ${poolOf(`excluded.labels || ${KEPT_LABELS} || excluded.assigned_labels`)},
      platform = excluded.platform,
      agent_version = excluded.agent_version, previous_version = excluded.previous_version,
      boot_id = excluded.boot_id, capabilities = excluded.capabilities,
      confirmed_sequence = greatest(nodes.confirmed_sequence, excluded.confirmed_sequence),
      last_seen = excluded.last_seen, online = true, token_hash = excluded.token_hash,
      token_issued_at = excluded.token_issued_at, join_token_id = excluded.join_token_id,
      session_id = excluded.session_id, reset_at = null, version = nodes.version + 1,
      updated_at = excluded.updated_at, held_by = excluded.held_by,
      enrollment_key_hash = excluded.enrollment_key_hash,
      pending = nodes.pending or (excluded.pending and nodes.revoked_at is not null),
      revoked_at = null
    where nodes.reset_at is not null
      or (nodes.revoked_at is null
        and (exists (select 1 from v where v.id = excluded.id and v.grant_kind is not null)
          or (excluded.enrollment_key_hash is not null
            and nodes.enrollment_key_hash = excluded.enrollment_key_hash
            and nodes.join_token_id = excluded.join_token_id)))
    returning nodes.id, (xmax = 0) as created, nodes.pending
  ), counted as (
    update join_tokens set uses = join_tokens.uses + c.n
      from (select v.join_token_id, count(*) as n from enrolled
          join v on v.id = enrolled.id join admitted a on a.id = enrolled.id
          where a.consumes group by v.join_token_id) c
      where join_tokens.id = c.join_token_id
  ), notified as (${notifyNodeIds("enrolled")}
  ), audited as (
    insert into audit_events (time, actor, actor_ip, action, node_id, message, detail)
    select v.now, 'join-token:' || v.join_token_id, v.peer, 'node.reenroll', v.id,
      'node ' || v.id || ' re-enrolled with join token ' || v.join_token_id || ' from '
        || v.peer || ' ('
        || case ${VIA} when 'named' then 'a token for named node ids'
             when 'allow_reenroll' then 'a token allowing re-enrollment'
             when 'enrollment_key' then 'the same enrollment key: the Welcome of its '
               || 'enrollment was lost'
             else 'after an operator reset' end || ')',
      jsonb_build_object('joinTokenId', v.join_token_id, 'peer', v.peer, 'via', ${VIA})
    from enrolled join v on v.id = enrolled.id left join prior on prior.id = enrolled.id
    where not enrolled.created
    order by v.id
  )
  select v.id, enrolled.id is not null as enrolled, coalesce(enrolled.created, false) as created,
      coalesce(enrolled.pending, false) as pending, ${VIA} as via, case when enrolled.id is null and judged.problem is null
          and not judged.hopeless and a.id is null then 'used_up'
        else judged.problem end as problem,
      judged.max_uses, (select notified from notified) as notified
    from v join judged on judged.id = v.id left join enrolled on enrolled.id = v.id
      left join prior on prior.id = v.id left join admitted a on a.id = v.id`;

/** The parameters of {@link ENROLL_BATCH_SQL} (without the holder): one row per enrollment. */
export function enrollBatchParams(enrollments: readonly Enrollment[]): unknown[][] {
  const rows = enrollments.map((e) => [
    ...helloParams(e.hello),
    e.now,
    e.tokenHash,
    e.joinTokenId,
    e.sessionId,
    e.grant,
    e.peer,
    e.enrollmentKeyHash,
  ]);
  const columns = 16;
  return Array.from({ length: columns }, (_, c) => rows.map((row) => row[c]));
}

/** What every enrollment statement of a store writes besides its rows. */
export interface EnrollSettings {
  /** This Control's instance id (`held_by`), or null. */
  readonly holder: string | null;
  /** New nodes wait as `pending` until an administrator approves them. */
  readonly requireApproval: boolean;
}

/**
 * Enrolls a batch in as few statements as it can, each enrollment's result at its position,
 * as enrolling them one by one in order would:
 * - the first enrollment of each node id goes into one statement; later ones of the same id
 *   (an agent retrying) follow in statements of their own, so they meet the node the earlier
 *   one wrote, exactly as they would alone;
 * - a data error (SQLSTATE class 22: a value PostgreSQL cannot store) fails only the
 *   enrollments that cause it: the statement is split in halves until they are found.
 * Each statement commits on its own, so any other error (connection lost, server down) fails
 * only the enrollments of the statement it ended: those an earlier statement committed keep
 * their outcome. Never rejects.
 */
export async function enrollBatch(
  pool: pg.Pool,
  settings: EnrollSettings,
  enrollments: readonly Enrollment[],
): Promise<EnrollResult[]> {
  const results: EnrollResult[] = new Array(enrollments.length);
  let pending = enrollments.map((enrollment, position) => ({ enrollment, position }));
  while (pending.length > 0) {
    const seen = new Set<string>();
    const round: typeof pending = [];
    const later: typeof pending = [];
    for (const entry of pending) {
      const id = entry.enrollment.hello.nodeId;
      if (seen.has(id)) later.push(entry);
      else {
        seen.add(id);
        round.push(entry);
      }
    }
    const outcomes = await enrollDistinct(
      pool,
      settings,
      round.map((e) => e.enrollment),
    );
    round.forEach((entry, i) => {
      results[entry.position] = outcomes[i] as EnrollResult;
    });
    pending = later;
  }
  return results;
}

interface EnrollRow {
  id: string;
  enrolled: boolean;
  created: boolean;
  pending: boolean;
  via: ReenrollVia;
  problem: TokenRefusal | null;
  max_uses: number | null;
}

/** One statement for enrollments of distinct node ids, halved around data errors. */
async function enrollDistinct(
  pool: pg.Pool,
  settings: EnrollSettings,
  enrollments: readonly Enrollment[],
): Promise<EnrollResult[]> {
  let rows: EnrollRow[];
  try {
    const result = await pool.query<EnrollRow>(ENROLL_BATCH_SQL, [
      ...enrollBatchParams(enrollments),
      settings.holder,
      settings.requireApproval,
    ]);
    rows = result.rows;
  } catch (error) {
    if (!isDataError(error) || enrollments.length === 1) {
      return enrollments.map(() => ({ ok: false, error }));
    }
    const half = Math.ceil(enrollments.length / 2);
    const first = await enrollDistinct(pool, settings, enrollments.slice(0, half));
    const second = await enrollDistinct(pool, settings, enrollments.slice(half));
    return [...first, ...second];
  }
  const byId = new Map(rows.map((row) => [row.id, row]));
  return enrollments.map((e): EnrollResult => {
    const row = byId.get(e.hello.nodeId);
    if (row?.problem) {
      return {
        ok: true,
        outcome: { kind: "token_refused", problem: row.problem, maxUses: row.max_uses ?? 0 },
      };
    }
    if (!row?.enrolled) return { ok: true, outcome: { kind: "refused" } };
    return {
      ok: true,
      outcome: row.created
        ? { kind: "created", pending: row.pending }
        : { kind: "reenrolled", via: row.via, pending: row.pending },
    };
  });
}
