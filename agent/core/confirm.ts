/**
 * The confirm procedure: the product rule on top of release verification that a confirm
 * raises the floor only to what the Agent itself verified.
 */
import {
  type AgentConfirm,
  OperationPhase,
} from "../../proto/gen/agentcontrol/v1/agent_control_pb.js";
import { recordSequence } from "./durable-state.js";
import type { OperationHost, Reporter } from "./operation-host.js";

/**
 * Makes the running release permanent. The floor rises to exactly the sequence this agent
 * recorded when it verified the release it runs; a confirm naming any other sequence is
 * refused (`confirm_mismatch`) and changes nothing. The release the agent was installed
 * with was never verified by it, so confirming it keeps the floor where it is.
 */
export async function confirm(
  host: OperationHost,
  opId: string,
  op: AgentConfirm,
  report: Reporter,
) {
  const current = host.state.version;
  if (op.version !== current) {
    return report(
      OperationPhase.FAILED,
      current,
      "version_mismatch",
      `running ${current}, not ${op.version}`,
    );
  }
  const verified = host.state.sequences?.[current];
  if (verified !== undefined && BigInt(verified) !== op.sequence) {
    return report(
      OperationPhase.FAILED,
      current,
      "confirm_mismatch",
      `the confirm names sequence ${op.sequence}; the release ${current} this agent verified has sequence ${verified}`,
    );
  }
  host.countApplication(opId);
  if (verified !== undefined) {
    if (BigInt(verified) > BigInt(host.state.confirmedSequence)) {
      host.state.confirmedSequence = verified;
    }
    recordSequence(host.state, current, BigInt(verified), []);
  }
  await host.applier.applyConfirm(opId, current);
  await report(
    OperationPhase.CONFIRMED,
    current,
    "",
    verified === undefined
      ? `the agent did not verify ${current} itself: the confirmed sequence stays ${host.state.confirmedSequence}`
      : "",
  );
}
