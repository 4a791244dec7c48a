/**
 * The node registry write for a stream authenticated by a client certificate: the client
 * CA is the enrollment authority, so the first Hello of a certified node creates its row
 * (no join token), and later Hellos update it like a node-token Hello. The node's token
 * hash is left as it is, so a node moving from tokens to certificates keeps both working
 * until an operator disables it. The certificate's fingerprint and expiry are recorded, so a
 * revocation can deny it (a certificate denied never gets here). Assigned labels (an administrator's) win over reported ones.
 * The labels the certificate assigns (`tls issue-node --label`) become the new node's
 * assigned labels when it enrolls, as a join token's do; a later Hello leaves them as they are.
 *
 * Like every Hello write, it records which Control holds the stream (`held_by`) and notifies
 * the node's id on the nodes channel.
 */
import type pg from "pg";
import { helloParams, poolOf } from "../db/node-statements.js";
import type { NodeHello } from "../db/node-store.js";
import { NODES_CHANNEL } from "../shared/notify-channels.js";

/**
 * True when a client certificate with this SHA-256 fingerprint is on the denylist (its node
 * was revoked) and the entry has not expired at `now` (it lasts as long as the certificate).
 */
export async function certificateDenied(
  pool: pg.Pool,
  fingerprint: string,
  now: Date,
): Promise<boolean> {
  const result = await pool.query(
    "select 1 from denied_certificates where fingerprint = $1 and expires_at > $2",
    [fingerprint, now],
  );
  return result.rows.length > 0;
}

/**
 * The assigned labels of a node written by a certified Hello: the certificate's (`$16`) when it
 * takes over a row a join token enrolled (`token_hash` set), else the row's own. A certificate
 * names its node: whoever enrolled that id by token first (a squatter holding any join token,
 * or the node itself before it moved to certificates) loses its node token, join token and
 * enrollment key with it (the columns below), and the labels it brought; an operator's later
 * `node label` on a certified node stays.
 */
const TAKEN_OVER_LABELS =
  "(case when nodes.token_hash is not null and $13::text is not null then $16::jsonb else nodes.assigned_labels end)";

/**
 * Creates or updates the row of a certificate-authenticated node in one statement;
 * `holder` is this Control's instance id (null: none), `certificate` the one it presented.
 * A new node is `pending` when `requireApproval` is set (as one enrolled by a join token). A
 * revoked node is not written and `refused` is returned, whatever certificate names it, until
 * an operator's `node reset` lets it enroll again; that return is audited (`node.reenroll`,
 * once: it clears `revoked_at`).
 */
export async function recordCertifiedHello(
  pool: pg.Pool,
  hello: NodeHello,
  sessionId: string,
  now: Date,
  holder: string | null = null,
  certificate?: {
    readonly fingerprint: string;
    readonly expiresAt: Date;
    readonly labels?: Readonly<Record<string, string>>;
  },
  requireApproval = false,
): Promise<{ created: boolean; refused?: true }> {
  const result = await pool.query<{ created: boolean }>(
    `with prior as (select id, revoked_at from nodes where id = $1),
     written as (
     insert into nodes (id, labels, pool, platform, agent_version, previous_version, boot_id,
        capabilities, confirmed_sequence, first_seen, last_seen, online, session_id,
        created_at, updated_at, held_by, cert_fingerprint, cert_expires_at, pending,
        assigned_labels)
     values ($1, $2::jsonb || $16::jsonb, coalesce(nullif($16::jsonb->>'pool', ''), $3::text),
        $4, $5, $6, $7,
        $8, $9, $10, $10, true, $11, $10, $10, $12::text, $13::text, $14::timestamptz,
        $15::boolean, $16::jsonb)
     on conflict (id) do update set
        labels = $2::jsonb || ${TAKEN_OVER_LABELS},
        pool = ${poolOf(`$2::jsonb || ${TAKEN_OVER_LABELS}`)}, platform = excluded.platform,
        agent_version = excluded.agent_version, previous_version = excluded.previous_version,
        boot_id = excluded.boot_id, capabilities = excluded.capabilities,
        confirmed_sequence = greatest(nodes.confirmed_sequence, excluded.confirmed_sequence),
        first_seen = coalesce(nodes.first_seen, excluded.first_seen),
        last_seen = excluded.last_seen, online = true, session_id = excluded.session_id,
        version = nodes.version + 1, updated_at = excluded.updated_at,
        held_by = excluded.held_by,
        cert_fingerprint = coalesce(excluded.cert_fingerprint, nodes.cert_fingerprint),
        cert_expires_at = coalesce(excluded.cert_expires_at, nodes.cert_expires_at),
        assigned_labels = ${TAKEN_OVER_LABELS},
        token_hash = case when $13::text is null then nodes.token_hash end,
        join_token_id = case when $13::text is null then nodes.join_token_id end,
        enrollment_key_hash = case when $13::text is null then nodes.enrollment_key_hash end,
        revoked_at = null
     where nodes.revoked_at is null or nodes.reset_at is not null
     returning id, (xmax = 0) as created
     ), notified as (select pg_notify('${NODES_CHANNEL}', id) from written
     ), audited as (
       insert into audit_events (time, actor, actor_ip, action, node_id, message, detail)
       select $10, 'certificate:' || coalesce($13::text, 'unknown'), '', 'node.reenroll',
         written.id, 'node ' || written.id || ' re-enrolled with its client certificate '
           || coalesce(left($13::text, 16), 'unknown') || ' (after an operator reset)',
         jsonb_build_object('via', 'certificate', 'fingerprint', $13::text)
       from written join prior on prior.id = written.id where prior.revoked_at is not null
       returning 1)
     select created, (select count(*) from notified) as notified,
       (select count(*) from audited) as audited from written`,
    [
      ...helloParams(hello),
      now,
      sessionId,
      holder,
      certificate?.fingerprint ?? null,
      certificate?.expiresAt ?? null,
      requireApproval,
      JSON.stringify(certificate?.labels ?? {}),
    ],
  );
  const row = result.rows[0];
  return row === undefined ? { created: false, refused: true } : { created: row.created };
}
