/**
 * The SQL fragments of the node-state rules, derived from the engine's one table of node-state
 * traits (`NODE_STATE_TRAITS`, control/campaign/node-state-traits.ts): no statement of the SQL
 * adapter writes a list of node states (or of campaign phases) of its own.
 */
import {
  BUSY_NODE_STATES,
  CAMPAIGN_PHASES,
  type CampaignPhase,
  FINAL_NODE_STATES,
  GRACE_SLOT_NODE_STATES,
  isEndedPhase,
  type NodeState,
  RESEND_UPGRADE_NODE_STATES,
  ROLLBACK_SLOT_NODE_STATES,
  SLOT_NODE_STATES,
} from "../../campaign/index.js";

/** `states` as the body of a SQL `in (...)` list: quoted, comma-separated, in the order given. */
export function sqlList(states: readonly (NodeState | CampaignPhase)[]): string {
  return states.map((s) => `'${s}'`).join(", ");
}

/** SQL: `expr` is one of `values` (`false` for none: `in ()` is no SQL). */
export function inList(expr: string, values: readonly (NodeState | CampaignPhase)[]): string {
  return values.length === 0 ? "false" : `${expr} in (${sqlList(values)})`;
}

/** SQL: `expr` is none of `values` (`true` for none). */
export function notInList(expr: string, values: readonly (NodeState | CampaignPhase)[]): string {
  return values.length === 0 ? "true" : `${expr} not in (${sqlList(values)})`;
}

/** The campaign phases that have not ended (running, paused, rolling back). */
const LIVE_PHASES = CAMPAIGN_PHASES.filter((p) => !isEndedPhase(p));

/** SQL: node state `expr` is not final. */
export function notFinalSql(expr: string): string {
  return notInList(expr, FINAL_NODE_STATES);
}

/**
 * The node states that hold a slot by their state (the disruption budget's rows, but the final
 * ones with a rollback pending): the predicate of the partial index `campaign_nodes_slot_idx`
 * (migration 0022), which a query reads through only when its own predicate says the same.
 */
export const SLOT_STATES_SQL = sqlList(SLOT_NODE_STATES);

/**
 * The final node states that hold a slot while a rollback sent to them is pending: the states
 * of the partial index `campaign_nodes_rollback_slot_idx` (migration 0025).
 */
export const ROLLBACK_SLOT_STATES_SQL = sqlList(ROLLBACK_SLOT_NODE_STATES);

/**
 * SQL: campaign node row `cn` was sent a rollback whose outcome is not recorded (the record's
 * `rollbackOperationId` set, its `rollbackResult` not): the rest of the predicate of the partial
 * index `campaign_nodes_rollback_slot_idx` (migration 0025), word for word but the row's alias,
 * so that a query saying it may read through that index.
 */
export function rollbackUnjudgedSql(cn: string): string {
  return `(${cn}.record->>'rollbackOperationId') is not null and (${cn}.record->>'rollbackResult') is null`;
}

/** SQL: node state `expr` is one whose unacknowledged upgrade is worth re-sending. */
export function resendUpgradeSql(expr: string): string {
  return inList(expr, RESEND_UPGRADE_NODE_STATES);
}

/**
 * True (SQL) when campaign node `cn` of campaign `c` holds its node busy, given that `c` has not
 * finished: its state is busy whatever its batch, or it is in the current batch of a live
 * campaign (that batch may still roll back and send it a rollback). The memory adapter's
 * equivalent is `holdsNodeBusy`.
 */
export function busySql(cn: string, c: string): string {
  return `(${inList(`${cn}.state`, BUSY_NODE_STATES)}
            or (${inList(`${c}.phase`, LIVE_PHASES)} and ${cn}.batch = ${c}.current_batch))`;
}

/**
 * True (SQL) when campaign node `cn` holds a slot at `now` (a parameter, epoch ms), as
 * `inFlight` says: a slot state, and within its config grace if its state holds one only then
 * (a grace not set yet counts as running); or a final state that holds one while a rollback
 * sent to it is pending (`rollbackPending`: sent, no outcome recorded). Each arm of the `or`
 * implies the predicate of one partial index (0022's, 0025's; the second arm is 0025's
 * predicate itself), so PostgreSQL reads the rows through both (a BitmapOr), never the history.
 */
export function holdsSlotSql(cn: string, now: string): string {
  return `((${inList(`${cn}.state`, SLOT_NODE_STATES)}
          and (${notInList(`${cn}.state`, GRACE_SLOT_NODE_STATES)}
               or coalesce((${cn}.record->>'graceEndsAt')::double precision > ${now}, true)))
        or (${inList(`${cn}.state`, ROLLBACK_SLOT_NODE_STATES)} and ${rollbackUnjudgedSql(cn)}))`;
}
