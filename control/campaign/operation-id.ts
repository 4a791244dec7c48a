import type { ActionKind } from "./model.js";

/**
 * The id of a campaign's operation of `kind` for a node: a pure function of its inputs, so a
 * decision re-run after a crash produces the same id and the Agent's dedupe absorbs the resend.
 * Each node gets at most one operation of each kind per campaign (a retry is a new campaign).
 */
export function operationId(campaignId: string, nodeId: string, kind: ActionKind): string {
  return `${campaignId}/${nodeId}/${kind}`;
}
