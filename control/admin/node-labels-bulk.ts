/**
 * `NodeService.LabelNodes`: the assigned labels of many nodes in one request and one
 * transaction — every node a selector matches, or each listed node its own change (from a
 * file) — with one audit event saying how many nodes changed. A listed node id that does not
 * exist refuses the whole request: a file with a typo changes nothing.
 */
import type { ServiceImpl } from "@connectrpc/connect";
import type { NodeService } from "../../proto/gen/agentcontrol/admin/v1/node_pb.js";
import { isLabelKey } from "../agents/validate.js";
import { stageAudit } from "../db/audit-log.js";
import { ControlError } from "../errors.js";
import { type Principal, principalKey } from "./auth.js";
import { assignedLabels, labelText, type NodeIdentityDeps } from "./node-identity-service.js";

/** The most nodes one request may list. */
export const MAX_LABELLED_NODES = 100_000;
/** The most node ids one audit event's detail names (its message has the count). */
const AUDITED_IDS = 100;

/** One node's validated change. */
interface Change {
  readonly node_id: string;
  readonly set: Record<string, string>;
  readonly remove: string[];
}

/**
 * A change's `set` and `remove`, validated as LabelNode's are.
 * @throws ControlError `invalid_argument` naming `field`.
 */
function change(
  set: Readonly<Record<string, string>>,
  remove: readonly string[],
  field: string,
): { set: Record<string, string>; remove: string[] } {
  const labels = assignedLabels(set, `${field}set`);
  const keys = [...new Set(remove)];
  const bad = keys.find((key) => !isLabelKey(key));
  if (bad !== undefined) {
    throw new ControlError(
      "invalid_argument",
      `${field}remove: "${bad.slice(0, 40)}" is not a valid label key`,
      { field: `${field}remove` },
    );
  }
  const both = keys.find((key) => key in labels);
  if (both !== undefined) {
    throw new ControlError(
      "invalid_argument",
      `${field}label "${both}" cannot be both set and removed`,
    );
  }
  return { set: labels, remove: keys };
}

/** `set a=1; removed b` for audit messages and the CLI. */
function changeText(c: { set: Record<string, string>; remove: readonly string[] }): string {
  return [
    ...(Object.keys(c.set).length > 0 ? [`set ${labelText(sorted(c.set))}`] : []),
    ...(c.remove.length > 0 ? [`removed ${[...c.remove].sort().join(",")}`] : []),
  ].join("; ");
}

function sorted(labels: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1)));
}

/**
 * The assigned and effective labels of the rows of `changes` (a JSON array of {@link Change})
 * change together, as LabelNode changes one node's (the pool follows the `pool` label).
 */
const UPDATE_LISTED = `
  update nodes n set assigned_labels = (n.assigned_labels - c.remove) || c.set,
         labels = (n.labels - c.remove) || c.set,
         pool = coalesce(nullif(((n.labels - c.remove) || c.set)->>'pool', ''), 'default'),
         version = n.version + 1, updated_at = ?
    from jsonb_to_recordset(?::jsonb) as c(node_id text, set jsonb, remove text[])
   where n.id = c.node_id
  returning n.id`;

/**
 * Every node whose labels contain the selector gets one change (label keys never hold a
 * comma: the removed keys travel as one comma-separated text, as in LabelNode).
 */
const UPDATE_SELECTED = `
  update nodes set assigned_labels = (assigned_labels - string_to_array(?, ',')) || ?::jsonb,
         labels = (labels - string_to_array(?, ',')) || ?::jsonb,
         pool = coalesce(nullif(((labels - string_to_array(?, ',')) || ?::jsonb)->>'pool', ''), 'default'),
         version = version + 1, updated_at = ?
   where labels @> ?::jsonb
  returning id`;

/** The LabelNodes handler. */
export function labelNodesHandler(
  deps: Pick<NodeIdentityDeps, "db" | "clock">,
): Pick<ServiceImpl<typeof NodeService>, "labelNodes"> {
  return {
    async labelNodes(req, ctx) {
      const principal = ctx.values.get(principalKey) as Principal;
      const selector = Object.entries(req.selector);
      if (selector.length > 0 === req.nodes.length > 0) {
        throw new ControlError(
          "invalid_argument",
          "give either a selector (with labels to set or remove) or a list of nodes, not both",
        );
      }
      for (const [key] of selector) {
        if (!isLabelKey(key)) {
          throw new ControlError(
            "invalid_argument",
            `selector: "${key.slice(0, 40)}" is not a valid label key`,
            { field: "selector" },
          );
        }
      }
      if (req.nodes.length > MAX_LABELLED_NODES) {
        throw new ControlError(
          "invalid_argument",
          `nodes: at most ${MAX_LABELLED_NODES} nodes in one request, got ${req.nodes.length}`,
          { field: "nodes" },
        );
      }
      const common = selector.length > 0 ? change(req.set, req.remove, "") : undefined;
      if (common && Object.keys(common.set).length === 0 && common.remove.length === 0) {
        throw new ControlError(
          "invalid_argument",
          "nothing to change: give labels to set (k=v) or remove (k-)",
        );
      }
      const listed: Change[] = req.nodes.map((n, i) => ({
        node_id: n.nodeId,
        ...change(n.set, n.remove, `nodes[${i}].`),
      }));
      const ids = new Set<string>();
      for (const c of listed) {
        if (ids.has(c.node_id)) {
          throw new ControlError("invalid_argument", `node "${c.node_id}" is listed twice`);
        }
        ids.add(c.node_id);
      }
      const now = deps.clock.now();
      let changed: string[] = [];
      await deps.db.em().transactional(async (em) => {
        if (common) {
          const match = JSON.stringify(Object.fromEntries(selector));
          const set = JSON.stringify(common.set);
          const keys = common.remove.join(",");
          const rows = await em.execute<{ id: string }[]>(UPDATE_SELECTED, [
            keys,
            set,
            keys,
            set,
            keys,
            set,
            now,
            match,
          ]);
          changed = rows.map((r) => r.id).sort();
        } else {
          const rows = await em.execute<{ id: string }[]>(UPDATE_LISTED, [
            now,
            JSON.stringify(listed),
          ]);
          changed = rows.map((r) => r.id).sort();
          if (changed.length < listed.length) {
            const found = new Set(changed);
            const missing = listed.filter((c) => !found.has(c.node_id)).map((c) => c.node_id);
            throw new ControlError(
              "node_not_found",
              `no node with id ${missing
                .slice(0, 10)
                .map((id) => `"${id}"`)
                .join(
                  ", ",
                )}${missing.length > 10 ? ` and ${missing.length - 10} more` : ""}: nothing was labelled`,
            );
          }
        }
        if (changed.length > 0) {
          await em.execute(
            "select pg_notify('agent_control_nodes', id) from jsonb_array_elements_text(?::jsonb) as id",
            [JSON.stringify(changed)],
          );
        }
        const count = `${changed.length} node${changed.length === 1 ? "" : "s"}`;
        const what = common
          ? `labels of ${count} matching ${labelText(sorted(Object.fromEntries(selector)))}: ${changeText(common)}`
          : `labels of ${count} changed from a list`;
        stageAudit(em, {
          actor: principal,
          action: "node.label",
          time: now,
          message: what,
          detail: {
            count: changed.length,
            ...(common
              ? { selector: Object.fromEntries(selector), set: common.set, remove: common.remove }
              : {}),
            nodeIds: changed.slice(0, AUDITED_IDS),
          },
        });
        await em.flush();
      });
      return { changed: changed.length, nodeIds: changed };
    },
  };
}
