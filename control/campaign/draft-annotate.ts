/**
 * Operations recorded on a node of the draft after it ended (internal to decide): the rollback
 * of its batch, the confirm of its passed batch. A final state never changes, so these are the
 * only fields a final record takes, each written once.
 */
import type { Draft } from "./draft.js";
import type { CampaignNode } from "./model.js";
import { isFinal } from "./model.js";

/** The fields {@link annotateFinal} may set: operations sent to a node after it ended. */
export type FinalAnnotation = Partial<
  Pick<
    CampaignNode,
    | "rollbackOperationId"
    | "rollbackAt"
    | "rollbackBootId"
    | "rollbackDeadline"
    | "rollbackRestartedAt"
    | "rollbackResult"
    | "confirmOperationId"
  >
>;

const ANNOTATIONS: ReadonlySet<string> = new Set([
  "rollbackOperationId",
  "rollbackAt",
  "rollbackBootId",
  "rollbackDeadline",
  "rollbackRestartedAt",
  "rollbackResult",
  "confirmOperationId",
]);

/**
 * Records on a FINAL node an operation sent to it after it ended (the rollback of its batch, the
 * confirm of its passed batch): only `rollbackOperationId`, `rollbackAt`, `rollbackBootId`,
 * `rollbackDeadline`, `rollbackRestartedAt`, `rollbackResult` and `confirmOperationId`, each written once. Its state, code, message and times stay as they are
 * (final states never change); the record counts as changed, so the worker writes it.
 * @throws when the node is not final, the patch names another field, or a field already holds
 * another value.
 */
export function annotateFinal(
  d: Draft,
  n: CampaignNode,
  patch: FinalAnnotation,
  reason?: string,
): CampaignNode {
  const at = d.indexOf(n);
  const before = at === undefined ? undefined : d.records[at];
  if (at === undefined || before === undefined) {
    throw new Error(`node ${n.nodeId} is not in campaign ${d.campaign.id}`);
  }
  if (!isFinal(before.state)) {
    throw new Error(
      `node ${n.nodeId} is ${before.state}, not final; annotateFinal is for final nodes`,
    );
  }
  for (const [key, value] of Object.entries(patch)) {
    if (!ANNOTATIONS.has(key)) {
      throw new Error(`node ${n.nodeId} is final (${before.state}); refusing to set ${key}`);
    }
    const old = before[key as keyof FinalAnnotation];
    if (old !== undefined && old !== value) {
      throw new Error(`node ${n.nodeId}: ${key} is already ${old}; refusing ${String(value)}`);
    }
  }
  const after: CampaignNode = { ...before, ...patch };
  d.records[at] = after;
  d.changed.add(at);
  d.revision++;
  if (reason !== undefined) d.reasons.push(`node ${n.nodeId}: ${before.state} (final): ${reason}`);
  return after;
}
