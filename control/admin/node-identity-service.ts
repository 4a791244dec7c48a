/**
 * The NodeService calls that decide who a node is and what Control believes about it:
 * labels an administrator assigns, approval of a pending node, and revocation. Each is one
 * transaction with its audit event.
 */
import type { ServiceImpl } from "@connectrpc/connect";
import type { Node, NodeService } from "../../proto/gen/agentcontrol/admin/v1/node_pb.js";
import { isLabelKey } from "../agents/validate.js";
import type { Clock } from "../clock.js";
import { stageAudit } from "../db/audit-log.js";
import type { Database } from "../db/database.js";
import type { NodeRecord } from "../db/entities/index.js";
import { ControlError } from "../errors.js";
import { CUTOFF_CHANNEL } from "../shared/notify-channels.js";
import { type Principal, principalKey } from "./auth.js";

/** The most labels one join token or one node may be assigned. */
export const MAX_ASSIGNED_LABELS = 64;
/** The most enrollments a join token may allow. */
export const MAX_JOIN_TOKEN_USES = 1_000_000;

/** What the identity calls need. */
export interface NodeIdentityDeps {
  readonly db: Database;
  readonly clock: Clock;
  /** Closes the live stream of a node held by this Control (no-op when it holds none). */
  readonly cutOff?: (nodeId: string, message: string) => void;
}

/**
 * A join token's `max_uses`: undefined for 0 (no limit).
 * @throws ControlError `invalid_argument` for a negative or too large value.
 */
export function joinTokenMaxUses(maxUses: number): number | undefined {
  if (maxUses === 0) return undefined;
  if (!Number.isInteger(maxUses) || maxUses < 0 || maxUses > MAX_JOIN_TOKEN_USES) {
    throw new ControlError(
      "invalid_argument",
      `max_uses must be between 1 and ${MAX_JOIN_TOKEN_USES} (0: no limit), got ${maxUses}`,
      { field: "max_uses" },
    );
  }
  return maxUses;
}

/**
 * Labels to assign, validated as Hello labels are (key form, value length), at most
 * {@link MAX_ASSIGNED_LABELS}.
 * @throws ControlError `invalid_argument` naming `field` and the bad label.
 */
export function assignedLabels(
  labels: Readonly<Record<string, string>>,
  field: string,
): Record<string, string> {
  const entries = Object.entries(labels);
  if (entries.length > MAX_ASSIGNED_LABELS) {
    throw new ControlError("invalid_argument", `${field}: at most ${MAX_ASSIGNED_LABELS} labels`, {
      field,
    });
  }
  for (const [key, value] of entries) {
    if (!isLabelKey(key)) {
      throw new ControlError(
        "invalid_argument",
        `${field}: "${key.slice(0, 40)}" is not a valid label key`,
        {
          field,
        },
      );
    }
    if (value.length > 256) {
      throw new ControlError(
        "invalid_argument",
        `${field}: label "${key}" is longer than 256 characters`,
        {
          field,
        },
      );
    }
  }
  return Object.fromEntries(entries);
}

/** Labels as `k=v,k=v` for audit messages. */
export function labelText(labels: Readonly<Record<string, string>>): string {
  return Object.entries(labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
}

/**
 * The LabelNode, ApproveNode and RevokeNode handlers; `reload` turns the node's row (read
 * again after the change) into its API message.
 */
export function nodeIdentityHandlers(
  deps: NodeIdentityDeps,
  reload: (nodeId: string) => Promise<Node | undefined>,
): Pick<ServiceImpl<typeof NodeService>, "labelNode" | "approveNode" | "revokeNode"> {
  const principalOf = (ctx: { values: { get(key: typeof principalKey): unknown } }) =>
    ctx.values.get(principalKey) as Principal;
  const missing = (nodeId: string) =>
    new ControlError("node_not_found", `no node with id "${nodeId}"`);

  return {
    async labelNode(req, ctx) {
      const set = assignedLabels(req.set, "set");
      const remove = [...new Set(req.remove)];
      const bad = remove.find((key) => !isLabelKey(key));
      if (bad !== undefined) {
        throw new ControlError(
          "invalid_argument",
          `remove: "${bad.slice(0, 40)}" is not a valid label key`,
          {
            field: "remove",
          },
        );
      }
      if (Object.keys(set).length === 0 && remove.length === 0) {
        throw new ControlError(
          "invalid_argument",
          "nothing to change: give labels to set (k=v) or remove (k-)",
        );
      }
      const both = remove.find((key) => key in set);
      if (both !== undefined) {
        throw new ControlError(
          "invalid_argument",
          `label "${both}" cannot be both set and removed`,
        );
      }
      const now = deps.clock.now();
      const principal = principalOf(ctx);
      // Label keys never hold a comma: the removed keys travel as one comma-separated text.
      const keys = remove.join(",");
      const json = JSON.stringify(set);
      await deps.db.em().transactional(async (em) => {
        // Plain SQL like every other write of this row (Hellos, liveness): the effective labels
        // are the reported ones overlaid with the assigned ones, so both change together.
        const rows = await em.execute<{ id: string; assigned_labels: Record<string, string> }[]>(
          `update nodes set assigned_labels = (assigned_labels - string_to_array(?, ',')) || ?::jsonb,
             labels = (labels - string_to_array(?, ',')) || ?::jsonb,
             pool = coalesce(nullif(((labels - string_to_array(?, ',')) || ?::jsonb)->>'pool', ''), 'default'),
             version = version + 1, updated_at = ?
           where id = ? returning id, assigned_labels`,
          [keys, json, keys, json, keys, json, now, req.nodeId],
        );
        if (rows.length === 0) throw missing(req.nodeId);
        await em.execute("select pg_notify('agent_control_nodes', ?)", [req.nodeId]);
        const change = [
          ...(Object.keys(set).length > 0 ? [`set ${labelText(set)}`] : []),
          ...(remove.length > 0 ? [`removed ${remove.join(",")}`] : []),
        ].join("; ");
        stageAudit(em, {
          actor: principal,
          action: "node.label",
          time: now,
          nodeId: req.nodeId,
          message: `node ${req.nodeId} labels ${change}`,
          detail: { set, remove },
        });
        await em.flush();
      });
      return { node: await reload(req.nodeId) };
    },

    async approveNode(req, ctx) {
      const now = deps.clock.now();
      const principal = principalOf(ctx);
      await deps.db.em().transactional(async (em) => {
        const rows = await em.execute<{ id: string; was: boolean }[]>(
          `update nodes set pending = false, version = version + 1, updated_at = ?
           where id = ? returning id, true as was`,
          [now, req.nodeId],
        );
        if (rows.length === 0) throw missing(req.nodeId);
        await em.execute("select pg_notify('agent_control_nodes', ?)", [req.nodeId]);
        stageAudit(em, {
          actor: principal,
          action: "node.approve",
          time: now,
          nodeId: req.nodeId,
          message: `node ${req.nodeId} approved: campaigns may offer it upgrades`,
        });
        await em.flush();
      });
      return { node: await reload(req.nodeId) };
    },

    async revokeNode(req, ctx) {
      const now = deps.clock.now();
      const principal = principalOf(ctx);
      const reason = req.reason.slice(0, 1024);
      let denied: string[] = [];
      await deps.db.em().transactional(async (em) => {
        const rows = await em.execute<Pick<NodeRecord, "id">[]>(
          `update nodes set token_hash = null, token_issued_at = null, reset_at = null,
             enrollment_key_hash = null, revoked_at = coalesce(revoked_at, ?),
             version = version + 1, updated_at = ?
           where id = ? returning id`,
          [now, now, req.nodeId],
        );
        if (rows.length === 0) throw missing(req.nodeId);
        const certificates = await em.execute<{ fingerprint: string }[]>(
          `insert into denied_certificates (fingerprint, node_id, denied_at, expires_at)
           select cert_fingerprint, id, ?, coalesce(cert_expires_at, ?::timestamptz + interval '398 days')
             from nodes where id = ? and cert_fingerprint is not null
           on conflict (fingerprint) do update set denied_at = excluded.denied_at
           returning fingerprint`,
          [now, now, req.nodeId],
        );
        denied = certificates.map((c) => c.fingerprint);
        // Whichever Control holds the stream closes it when this commits (cut-off channel).
        await em.execute(`select pg_notify('${CUTOFF_CHANNEL}', ?)`, [req.nodeId]);
        stageAudit(em, {
          actor: principal,
          action: "node.revoke",
          time: now,
          nodeId: req.nodeId,
          message: `node ${req.nodeId} revoked: its node token no longer works, its stream is closed${denied.length > 0 ? ", its client certificate is refused" : ""}, and it must enroll again after an operator reset${reason ? `: ${reason}` : ""}`,
          detail: { reason, deniedFingerprints: denied },
        });
        await em.flush();
      });
      deps.cutOff?.(req.nodeId, "node revoked by an administrator: enroll again");
      return { node: await reload(req.nodeId), deniedFingerprints: denied };
    },
  };
}
