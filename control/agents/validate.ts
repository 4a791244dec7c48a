/**
 * Validation of what Agents send. Every check names the field and the rule, because the
 * message ends the stream as an INVALID_ARGUMENT status an operator will read.
 */
import { timestampMs } from "@bufbuild/protobuf/wkt";
import type {
  Hello,
  ObservedState,
  TrustStatus,
} from "../../proto/gen/agentcontrol/v1/agent_control_pb.js";
import { OperationPhase } from "../../proto/gen/agentcontrol/v1/agent_control_pb.js";
import type { NodeHello } from "../db/node-store.js";
import { isLabelKey, LABEL_KEY_LENGTH, LABEL_VALUE_LENGTH } from "../shared/label-key.js";
import { isNodeId, NODE_ID_MAX_LENGTH } from "../shared/node-id.js";
import { printableText } from "../shared/printable-text.js";

/** Limits on what one Hello may carry. */
export const HELLO_LIMITS = {
  nodeIdLength: NODE_ID_MAX_LENGTH,
  labels: 64,
  labelKeyLength: LABEL_KEY_LENGTH,
  labelValueLength: LABEL_VALUE_LENGTH,
  capabilities: 32,
  capabilityLength: 64,
} as const;

/** A semantic version (2.0.0), build metadata allowed. */
export const SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$/;
const PLATFORM = /^[a-z0-9]+-[a-z0-9_]+$/;
const TOKEN_LIKE = /^[A-Za-z0-9._:-]+$/;
const OPERATION_ID = /^[A-Za-z0-9._:/-]+$/;

export { isLabelKey };

/** An enrollment key: base64url characters (its length is checked apart). */
const ENROLLMENT_KEY = /^[A-Za-z0-9_-]+$/;

/** The outcome of a validation: the value, or a message naming what is wrong. */
export type Checked<T> = { ok: true; value: T } | { ok: false; message: string };

/** Validates a Hello; `capabilities` here are still the Agent's offer. */
export function checkHello(
  hello: Hello,
): Checked<Omit<NodeHello, "capabilities"> & { offered: string[]; enrollmentKey: string }> {
  const problems: string[] = [];
  if (!isNodeId(hello.nodeId)) {
    problems.push(
      `node_id must be 1-${HELLO_LIMITS.nodeIdLength} characters of letters, digits, '.', '_', ':' or '-'`,
    );
  }
  if (!SEMVER.test(hello.agentVersion) || hello.agentVersion.length > 64) {
    problems.push(`agent_version "${clip(hello.agentVersion)}" is not a semantic version`);
  }
  if (
    hello.previousVersion &&
    (!SEMVER.test(hello.previousVersion) || hello.previousVersion.length > 64)
  ) {
    problems.push(`previous_version "${clip(hello.previousVersion)}" is not a semantic version`);
  }
  if (!PLATFORM.test(hello.platform) || hello.platform.length > 32) {
    problems.push(`platform "${clip(hello.platform)}" must look like linux-amd64`);
  }
  if (!hello.bootId || hello.bootId.length > 128 || !TOKEN_LIKE.test(hello.bootId)) {
    problems.push("boot_id must be 1-128 characters of letters, digits, '.', '_', ':' or '-'");
  }
  if (hello.capabilities.length > HELLO_LIMITS.capabilities) {
    problems.push(`at most ${HELLO_LIMITS.capabilities} capabilities`);
  }
  if (hello.capabilities.some((c) => c.length > HELLO_LIMITS.capabilityLength)) {
    problems.push(`capabilities must be at most ${HELLO_LIMITS.capabilityLength} characters`);
  }
  const labelEntries = Object.entries(hello.labels);
  if (labelEntries.length > HELLO_LIMITS.labels)
    problems.push(`at most ${HELLO_LIMITS.labels} labels`);
  for (const [key, value] of labelEntries) {
    if (!isLabelKey(key)) {
      problems.push(`label key "${clip(key)}" is not valid`);
      break;
    }
    if (value.length > HELLO_LIMITS.labelValueLength) {
      problems.push(`label "${key}" is longer than ${HELLO_LIMITS.labelValueLength} characters`);
      break;
    }
  }
  if (
    hello.enrollmentKey &&
    (hello.enrollmentKey.length < 16 ||
      hello.enrollmentKey.length > 128 ||
      !ENROLLMENT_KEY.test(hello.enrollmentKey))
  ) {
    problems.push("enrollment_key must be 16-128 base64url characters");
  }
  if (hello.confirmedSequence > BigInt(Number.MAX_SAFE_INTEGER)) {
    problems.push("confirmed_sequence is too large");
  }
  if (problems.length > 0) return { ok: false, message: `invalid Hello: ${problems.join("; ")}` };
  return {
    ok: true,
    value: {
      nodeId: hello.nodeId,
      labels: { ...hello.labels },
      pool: hello.labels.pool || "default",
      platform: hello.platform,
      agentVersion: hello.agentVersion,
      previousVersion: hello.previousVersion,
      bootId: hello.bootId,
      confirmedSequence: Number(hello.confirmedSequence),
      offered: [...new Set(hello.capabilities)],
      enrollmentKey: hello.enrollmentKey,
    },
  };
}

/** Validates an ObservedState report. */
export function checkObserved(observed: ObservedState): Checked<ObservedState> {
  if (
    !observed.operationId ||
    observed.operationId.length > 256 ||
    !OPERATION_ID.test(observed.operationId)
  ) {
    return {
      ok: false,
      message:
        "invalid ObservedState: operation_id must be 1-256 characters of letters, digits, '.', '_', ':', '/' or '-'",
    };
  }
  if (!(observed.phase in OperationPhase) || observed.phase === OperationPhase.UNSPECIFIED) {
    return { ok: false, message: `invalid ObservedState: unknown phase ${observed.phase}` };
  }
  if (observed.code.length > 64 || observed.version.length > 64) {
    return {
      ok: false,
      message: "invalid ObservedState: code and version are at most 64 characters",
    };
  }
  return { ok: true, value: { ...observed, message: observed.message.slice(0, 1024) } };
}

/** A TrustStatus as Control keeps it. */
export interface CheckedTrust {
  readonly frozen: boolean;
  /** At most 1024 characters, control characters replaced (printable); empty when not frozen. */
  readonly reason: string;
  /** When the Agent first found itself frozen, never after `now`; null when not frozen. */
  readonly since: Date | null;
}

/** The latest `since` a TrustStatus may name: 9999-12-31T23:59:59Z. */
const MAX_TIMESTAMP_SECONDS = 253_402_300_799n;

/**
 * Validates a TrustStatus received at `now`: a frozen one must say since when (a time from
 * 1970 on; one after `now`, as a skewed clock would send, counts as `now`).
 */
export function checkTrustStatus(trust: TrustStatus, now: Date): Checked<CheckedTrust> {
  if (!trust.frozen) return { ok: true, value: { frozen: false, reason: "", since: null } };
  const since = trust.since;
  if (
    since === undefined ||
    since.seconds < 0n ||
    since.seconds > MAX_TIMESTAMP_SECONDS ||
    since.nanos < 0 ||
    since.nanos > 999_999_999
  ) {
    return {
      ok: false,
      message: "invalid TrustStatus: a frozen status needs since, a time from 1970 to 9999",
    };
  }
  const sinceMs = Math.min(timestampMs(since), now.getTime());
  return {
    ok: true,
    value: {
      frozen: true,
      reason: printableText(trust.reason.slice(0, 1024)),
      since: new Date(sinceMs),
    },
  };
}

function clip(text: string): string {
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}
