/**
 * An administrator's node commands (disable, enable, reset) over the admin store port (the
 * nodes of a fleet transaction: SQL in Control, memory in the simulation), each with the audit
 * row it writes in the same transaction. The admin API and the simulated operator run these
 * same functions; the API's shell adds only what is local to its process (closing the node's
 * stream held here, presenting the node).
 */
import type { FleetStore, FleetTransaction } from "../campaign-store/index.js";
import type { Actor } from "../db/audit-log.js";
import { ControlError } from "../errors.js";

/** The longest reset reason kept (longer ones are cut). */
export const MAX_RESET_REASON = 1024;

/** One node command's input. */
export interface NodeCommand {
  readonly nodeId: string;
  /** The administrator's reason ("" for none). */
  readonly reason: string;
  readonly actor: Actor;
  readonly now: Date;
}

function notFound(nodeId: string): ControlError {
  return new ControlError("node_not_found", `no node with id "${nodeId}"`);
}

/**
 * Sets node `c.nodeId` enabled or not, with its audit row, when it is not so already.
 * @throws ControlError `node_not_found` (nothing written).
 * @returns true when it changed; false when it already was so (nothing written).
 */
async function setEnabled(store: FleetStore, c: NodeCommand, enabled: boolean): Promise<boolean> {
  return await store.transaction(async (tx: FleetTransaction) => {
    const node = await tx.nodes.readNode(c.nodeId);
    if (node === undefined) throw notFound(c.nodeId);
    if (node.enabled === enabled) return false;
    await tx.nodes.setEnabled(c.nodeId, enabled, c.reason, c.now);
    await tx.insertAudits(
      [
        {
          actor: c.actor.name,
          actorIp: c.actor.ip,
          action: enabled ? "node.enable" : "node.disable",
          nodeId: c.nodeId,
          message: enabled
            ? `node ${c.nodeId} enabled`
            : `node ${c.nodeId} disabled${c.reason ? `: ${c.reason}` : ""}`,
        },
      ],
      c.now,
    );
    return true;
  });
}

/**
 * Disables a node: no campaign or convergence offers it anything from the commit on (its
 * campaigns skip it `node_disabled`). Disabling a disabled node changes nothing.
 * @throws ControlError `node_not_found`.
 * @returns true when it was enabled until now.
 */
export function disableNode(store: FleetStore, c: NodeCommand): Promise<boolean> {
  return setEnabled(store, c, false);
}

/**
 * Enables a node again (its disable reason cleared). Enabling an enabled node changes nothing.
 * @throws ControlError `node_not_found`.
 * @returns true when it was disabled until now.
 */
export function enableNode(store: FleetStore, c: NodeCommand): Promise<boolean> {
  return setEnabled(store, c, true);
}

/**
 * Resets a node: its node token stops working, its next join-token enrollment is accepted
 * once, every Control is told to close its streams once this commits, and the audit row keeps
 * the reason (at most {@link MAX_RESET_REASON} characters).
 * @throws ControlError `node_not_found` (nothing written or sent).
 */
export async function resetNode(store: FleetStore, c: NodeCommand): Promise<void> {
  const reason = c.reason.slice(0, MAX_RESET_REASON);
  await store.transaction(async (tx) => {
    if (!(await tx.nodes.resetCredential(c.nodeId, c.now))) throw notFound(c.nodeId);
    await tx.insertAudits(
      [
        {
          actor: c.actor.name,
          actorIp: c.actor.ip,
          action: "node.reset",
          nodeId: c.nodeId,
          message: `node ${c.nodeId} reset: its node token no longer works and its next join-token enrollment is accepted once${reason ? `: ${reason}` : ""}`,
          detail: reason ? { reason } : {},
        },
      ],
      c.now,
    );
  });
}
