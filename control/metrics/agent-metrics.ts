/**
 * The agent side's counters: handshakes by result, streams refused by the limit that was
 * full, operations queued on a stream by kind, Agent reports by phase, and the releases Agents
 * refused for want of trusted TUF metadata, by code. The agent server
 * and the hub call these hooks; they never block and never throw.
 */
import { OperationPhase } from "../../proto/gen/agentcontrol/v1/agent_control_pb.js";
import type { AgentEvent } from "../agents/events.js";
import type { EncodedOperation } from "../agents/operation-frame.js";
import type { StreamRefusal } from "../agents/session.js";
import type { ControlMetrics } from "./registry.js";

/**
 * The codes an Agent refuses a release with when its TUF metadata does not let it trust the
 * release: not listed (`untrusted_release`), expired (`metadata_expired`, a freeze) or not
 * fetchable (`metadata_unavailable`).
 */
export const TRUST_REFUSAL_CODES = [
  "untrusted_release",
  "metadata_expired",
  "metadata_unavailable",
] as const;

/** The kinds an operation id ends with (`campaignId/nodeId/kind`, see `operationId`). */
const OPERATION_KINDS = ["upgrade", "rollback", "confirm"] as const;

/** The hooks of {@link agentMetrics}. */
export interface AgentMetrics {
  /** A stream refused before any other work because `reason`'s limit was full. */
  refused(reason: StreamRefusal): void;
  /** A handshake ended: `welcomed`, `abandoned`, or the error code the stream ended with. */
  handshake(result: string): void;
  /** An operation was queued on a node's stream. */
  sent(operation: EncodedOperation): void;
  /** Counts the reports among the hub's events (subscribe it to the hub). */
  readonly onEvent: (event: AgentEvent) => void;
}

/** Declares the agent side's counters in `metrics` and returns the hooks that feed them. */
export function agentMetrics(metrics: ControlMetrics): AgentMetrics {
  const refusals = metrics.counter(
    "agent_control_streams_refused_total",
    "Agent streams refused with RESOURCE_EXHAUSTED before any other work, by the limit that was full.",
    ["reason"],
    [
      { reason: "max_streams" },
      { reason: "max_handshakes" },
      { reason: "max_handshakes_per_credential" },
    ],
  );
  const handshakes = metrics.counter(
    "agent_control_handshakes_total",
    "Agent stream handshakes that ended, by result: welcomed, abandoned (the stream closed first) or the error code the stream was ended with.",
    ["result"],
    [{ result: "welcomed" }, { result: "unauthenticated" }],
  );
  const operations = metrics.counter(
    "agent_control_operations_sent_total",
    "Operations queued on an Agent's stream (first sends and re-sends), by kind.",
    ["kind"],
    OPERATION_KINDS.map((kind) => ({ kind })),
  );
  const reports = metrics.counter(
    "agent_control_reports_total",
    "Operation reports (ObservedState) received from Agents, by phase.",
    ["phase"],
    [{ phase: "confirmed" }, { phase: "failed" }],
  );
  const trust = metrics.counter(
    "agent_control_agent_trust_refusals_total",
    "Releases Agents refused because their TUF metadata did not let them trust it, by code (metadata_expired: the Agent is frozen).",
    ["code"],
    TRUST_REFUSAL_CODES.map((code) => ({ code })),
  );
  const trustCodes: readonly string[] = TRUST_REFUSAL_CODES;
  return {
    refused: (reason) => refusals.inc({ reason }),
    handshake: (result) => handshakes.inc({ result }),
    sent: (operation) => operations.inc({ kind: operationKind(operation.id) }),
    onEvent: (event) => {
      if (event.kind !== "observed") return;
      const { phase, code } = event.observed;
      reports.inc({ phase: phaseName(phase) });
      if (phase === OperationPhase.REFUSED && trustCodes.includes(code)) trust.inc({ code });
    },
  };
}

/** The kind an operation id names, or `other` for an id of another form. */
export function operationKind(operationId: string): string {
  const kind = operationId.slice(operationId.lastIndexOf("/") + 1);
  return (OPERATION_KINDS as readonly string[]).includes(kind) ? kind : "other";
}

/** `accepted`, `failed`, … for a reported phase; `unspecified` for a number unknown here. */
export function phaseName(phase: OperationPhase): string {
  const name: string | undefined = OperationPhase[phase];
  return name === undefined ? "unspecified" : name.toLowerCase();
}
