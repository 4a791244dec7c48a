/**
 * Deferral is a negotiated capability (`defer.v1`, SPEC §10): only an Agent whose session
 * negotiated it may answer an operation DEFERRED ("not now, offer it again later"). A DEFERRED
 * from any other session is not honoured: it becomes a refusal, REFUSED with the code
 * {@link DEFER_UNSUPPORTED}, so the campaign fails the node `rejected` with a message naming the
 * capability, instead of holding it as deferred (docs/decisions.md, "Deferral is negotiated").
 */
import {
  type ObservedState,
  OperationPhase,
} from "../../proto/gen/agentcontrol/v1/agent_control_pb.js";

/** The capability an Agent negotiates to answer DEFERRED. */
export const CAP_DEFER = "defer.v1";

/** The report code of a DEFERRED answer from a session that did not negotiate {@link CAP_DEFER}. */
export const DEFER_UNSUPPORTED = "defer_unsupported";

/**
 * The report as Control keeps it: `observed` itself, unless it is DEFERRED and `capabilities`
 * (the session's negotiated set) lack {@link CAP_DEFER}; then a REFUSED report of the same
 * operation, code {@link DEFER_UNSUPPORTED}, its message naming the capability and the
 * Agent's own reason.
 */
export function honouredReport(
  observed: ObservedState,
  capabilities: readonly string[],
): ObservedState {
  if (observed.phase !== OperationPhase.DEFERRED || capabilities.includes(CAP_DEFER)) {
    return observed;
  }
  const reason = observed.message === "" ? "" : ` (its reason: ${observed.message})`;
  return {
    ...observed,
    phase: OperationPhase.REFUSED,
    code: DEFER_UNSUPPORTED,
    message: `answered DEFERRED without negotiating ${CAP_DEFER}${reason}`.slice(0, 1024),
  };
}
