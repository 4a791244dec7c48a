/**
 * Builders of the AgentMessages a simulated agent sends. Pure: no state, no I/O.
 */
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  type AgentMessage,
  AgentMessageSchema,
  ConfigStatusSchema,
  HeartbeatSchema,
  type Hello,
  HelloSchema,
  ObservedStateSchema,
  TrustStatusSchema,
  type Welcome,
} from "../../proto/gen/agentcontrol/v1/agent_control_pb.js";
import type { ReportedState } from "./durable-state.js";
import type { TrustState } from "./trust-state.js";

/** The capability under which an Agent sends TrustStatus (Control must welcome it). */
export const CAP_TRUST = "trust.v1";

/** The fields of a Hello, as plain values. */
export type HelloFields = Pick<
  Hello,
  | "nodeId"
  | "agentVersion"
  | "platform"
  | "bootId"
  | "capabilities"
  | "labels"
  | "confirmedSequence"
  | "previousVersion"
  | "enrollmentKey"
>;

/** A Hello message. */
export function helloMessage(fields: HelloFields): AgentMessage {
  return create(AgentMessageSchema, {
    body: { case: "hello", value: create(HelloSchema, fields) },
  });
}

const HEARTBEAT: AgentMessage = create(AgentMessageSchema, {
  body: { case: "heartbeat", value: create(HeartbeatSchema) },
});

/** A Heartbeat message (one shared immutable instance: it has no fields). */
export function heartbeatMessage(): AgentMessage {
  return HEARTBEAT;
}

/**
 * `text` with each U+0000 written as U+FFFD. The Agent's messages quote refusals, which can
 * quote the bytes a hostile server sent, and Control ends a stream whose message carries
 * U+0000 (PostgreSQL text cannot hold it): an Agent sending one would lose its stream after
 * every Welcome, as it sends the same report again.
 */
function wireText(text: string): string {
  return text.replaceAll("\u0000", "\uFFFD");
}

/** A ConfigStatus message; `message` is sent without U+0000 (see {@link wireText}). */
export function configStatusMessage(ok: boolean, message: string): AgentMessage {
  return create(AgentMessageSchema, {
    body: {
      case: "configStatus",
      value: create(ConfigStatusSchema, { ok, message: wireText(message) }),
    },
  });
}

/**
 * An ObservedState message reporting `report` for operation `operationId`; the report's
 * message is sent without U+0000 (see {@link wireText}).
 */
export function observedMessage(operationId: string, report: ReportedState): AgentMessage {
  return create(AgentMessageSchema, {
    body: {
      case: "observed",
      value: create(ObservedStateSchema, {
        operationId,
        ...report,
        message: wireText(report.message),
      }),
    },
  });
}

/**
 * A TrustStatus message for `trust`: `reason` is the refusal's message (at most 1024
 * characters, without U+0000: see {@link wireText}) and `since` is set only while frozen.
 */
export function trustStatusMessage(trust: TrustState): AgentMessage {
  const reason = trust.frozen ? wireText(trust.message ?? trust.code ?? "").slice(0, 1024) : "";
  return create(AgentMessageSchema, {
    body: {
      case: "trustStatus",
      value: create(TrustStatusSchema, {
        frozen: trust.frozen,
        reason,
        checkedAt: timestampFromDate(new Date(trust.checkedAt)),
        ...(trust.frozen && trust.since !== undefined
          ? { since: timestampFromDate(new Date(trust.since)) }
          : {}),
      }),
    },
  });
}

/** The shortest heartbeat period an agent follows: Control's lowest `timeouts.heartbeatSeconds`. */
export const HEARTBEAT_MIN_MS = 50;
/** The longest heartbeat period an agent follows (also keeps the timer from overflowing). */
export const HEARTBEAT_MAX_MS = 600_000;
/** The heartbeat period when a Welcome asks for none (or for one that is not positive). */
const HEARTBEAT_DEFAULT_MS = 10_000;

/**
 * The heartbeat period a Welcome asks for, in ms, times `scale`: an unset, zero or negative
 * interval means 10 s; any other is kept within {@link HEARTBEAT_MIN_MS} and
 * {@link HEARTBEAT_MAX_MS} (a Welcome comes from whatever answered on Control's address).
 */
export function heartbeatMsOf(welcome: Welcome, scale: number): number {
  const interval = welcome.heartbeatInterval;
  const welcomedMs = interval ? Number(interval.seconds) * 1000 + interval.nanos / 1e6 : 0;
  const ms =
    Number.isFinite(welcomedMs) && welcomedMs > 0
      ? Math.min(HEARTBEAT_MAX_MS, Math.max(HEARTBEAT_MIN_MS, welcomedMs))
      : HEARTBEAT_DEFAULT_MS;
  return Math.max(1, ms * scale);
}
