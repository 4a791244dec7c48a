/**
 * How a simulated agent handles operations, as `agent-sim/operations.ts` does for a real
 * stream: an id already handled is not handled again (its last report is re-sent); one
 * operation at a time; an upgrade below the confirmed sequence is refused; a rollback
 * reinstates the previous release; a confirm raises the confirmed sequence to exactly the
 * sequence of the release the agent verified and runs, and one naming another sequence is
 * refused `confirm_mismatch` (as `agent/core/confirm.ts`). Each behaviour of
 * {@link AgentScript} bends this where the script says.
 */
import { type Operation, OperationPhase } from "../proto/gen/agentcontrol/v1/agent_control_pb.js";
import type { Report, SimAgent } from "./agent-script.js";
import {
  beginDownload,
  campaignOfOperation,
  endDownload,
  type OperationKind,
  type WireOperation,
} from "./ground-truth.js";
import type { History } from "./history.js";

/** What the procedures need of the network around the agent. */
export interface AgentHost {
  report(a: SimAgent, opId: string, r: Report): void;
  later(a: SimAgent, ms: number, run: () => void): void;
  restart(a: SimAgent, ms: number, then?: () => void): void;
  disconnect(nodeId: string, reason: string): void;
  /** The agent hangs: its stream stays open, silent, until Control judges it offline. */
  hang(nodeId: string): void;
  /** I7 and I8 violations the agents saw. */
  readonly violations: string[];
  /** A late return comes after this (the campaigns' longest reconnect timeout). */
  readonly lateAfterMs: number;
  /** The virtual time (for the agents' ground-truth record). */
  now(): number;
  /** The run's history (`history.ts`); absent in hand-built tests. */
  readonly history?: History | undefined;
}

/**
 * The agent begins to act on operation `opId` (it is disrupted until {@link endAct}): appends
 * `act` to the history.
 */
export function beginAct(
  host: Pick<AgentHost, "now" | "history">,
  a: SimAgent,
  opId: string,
  action: "upgrade" | "rollback",
): void {
  a.acting = { operationId: opId, boot: a.boot };
  host.history?.append({
    kind: "act",
    at: host.now(),
    nodeId: a.script.id,
    pool: a.script.pool,
    operationId: opId,
    campaignId: campaignOfOperation(opId),
    action,
  });
}

/** The agent stops acting (it answered with a result, or is back on a stream): `idle`. */
export function endAct(host: Pick<AgentHost, "now" | "history">, a: SimAgent): void {
  if (a.acting === undefined) return;
  host.history?.append({
    kind: "idle",
    at: host.now(),
    nodeId: a.script.id,
    operationId: a.acting.operationId,
  });
  a.acting = undefined;
}

/** The ground-truth view of `op` as it reaches or leaves for agent `a` at `at`. */
export function wireOf(a: SimAgent, op: Operation, at: number): WireOperation {
  const kind: OperationKind =
    op.kind.case === "agentUpgrade"
      ? "upgrade"
      : op.kind.case === "agentRollback"
        ? "rollback"
        : op.kind.case === "agentConfirm"
          ? "confirm"
          : "other";
  const value = op.kind.value as { version?: string; sequence?: bigint } | undefined;
  return {
    id: op.id,
    campaignId: campaignOfOperation(op.id),
    kind,
    version: value?.version ?? "",
    sequence: Number(value?.sequence ?? 0n),
    at,
    agentVersion: a.version,
    agentConfirmed: a.confirmedSequence,
  };
}

/**
 * The agent starts to run `version` (installed; it boots on it at its next start), whose
 * verified sequence is `sequence` (undefined: the release it was installed with).
 */
export function runVersion(
  host: Pick<AgentHost, "now" | "history">,
  a: SimAgent,
  version: string,
  sequence?: number,
): void {
  a.version = version;
  a.record.runs.push({ version, at: host.now(), sequence });
  host.history?.append({ kind: "run", at: host.now(), nodeId: a.script.id, version });
}

/** An operation reaches the agent: handled once per id, one at a time, like a real Agent. */
export function deliver(host: AgentHost, a: SimAgent, op: Operation): void {
  const wire = wireOf(a, op, host.now());
  a.record.received.push(wire);
  host.history?.append({
    kind: "received",
    at: wire.at,
    nodeId: a.script.id,
    operationId: wire.id,
    campaignId: wire.campaignId,
    operation: wire.kind,
    version: wire.version,
  });
  const prior = a.handled.get(op.id);
  if (a.handled.has(op.id)) {
    if (prior !== undefined) host.report(a, op.id, prior);
    return;
  }
  if (a.busy) {
    if (!a.waiting.some((w) => w.id === op.id)) a.waiting.push(op);
    return;
  }
  handle(host, a, op);
}

/** The current operation is done: the next waiting one starts. */
function done(host: AgentHost, a: SimAgent): void {
  a.busy = false;
  const next = a.waiting.shift();
  if (next !== undefined) deliver(host, a, next);
}

function handle(host: AgentHost, a: SimAgent, op: Operation): void {
  a.busy = true;
  switch (op.kind.case) {
    case "agentUpgrade":
      if (a.script.behaviour === "crash_before_ack" && !a.crashedOnce) {
        a.crashedOnce = true;
        beginAct(host, a, op.id, "upgrade");
        host.restart(a, a.script.restartMs);
        return;
      }
      a.handled.set(op.id, undefined);
      upgrade(host, a, op.id, op.kind.value.version, Number(op.kind.value.sequence));
      return;
    case "agentRollback":
      a.handled.set(op.id, undefined);
      rollback(host, a, op.id, op.kind.value.version);
      return;
    case "agentConfirm": {
      a.handled.set(op.id, undefined);
      const { version, sequence } = op.kind.value;
      if (version !== a.version) {
        host.report(a, op.id, fail(a.version, "version_mismatch"));
        done(host, a);
        return;
      }
      const verified = a.sequences.get(a.version);
      if (verified !== undefined && verified !== Number(sequence)) {
        host.report(a, op.id, fail(a.version, "confirm_mismatch"));
        done(host, a);
        return;
      }
      apply(host, a, op.id);
      // The release it was installed with was never verified by it: the floor stays.
      if (verified !== undefined && verified > a.confirmedSequence) {
        a.confirmedSequence = verified;
        a.confirmedHistory.push(a.confirmedSequence);
      }
      const h = a.confirmedHistory;
      if (h.length > 1 && (h[h.length - 1] as number) < (h[h.length - 2] as number))
        host.violations.push(`I8: ${a.script.id}'s confirmed sequence went back`);
      host.report(a, op.id, {
        phase: OperationPhase.CONFIRMED,
        version: a.version,
        code: "",
        message: "",
      });
      done(host, a);
      return;
    }
    default:
      host.report(a, op.id, {
        phase: OperationPhase.REFUSED,
        version: a.version,
        code: "unknown_operation",
        message: "",
      });
      done(host, a);
  }
}

function apply(host: AgentHost, a: SimAgent, opId: string): void {
  const times = (a.applied.get(opId) ?? 0) + 1;
  a.applied.set(opId, times);
  if (times > 1) host.violations.push(`I7: ${a.script.id} applied ${opId} ${times} times`);
}

function upgrade(
  host: AgentHost,
  a: SimAgent,
  opId: string,
  version: string,
  sequence: number,
): void {
  const s = a.script;
  const from = a.version;
  const phase = (p: OperationPhase, v = version): Report => ({
    phase: p,
    version: v,
    code: "",
    message: "",
  });
  if (s.behaviour === "no_cap" || s.behaviour === "refuse") {
    host.report(a, opId, { ...phase(OperationPhase.REFUSED, from), code: "agent_refused" });
    done(host, a);
    return;
  }
  if (sequence < a.confirmedSequence) {
    host.report(a, opId, { ...phase(OperationPhase.REFUSED, from), code: "sequence_rollback" });
    done(host, a);
    return;
  }
  if (s.busyUntil !== undefined && host.now() < s.busyUntil) {
    // Not now, as the real Agent with its update lock held: nothing applied, and the
    // operation forgotten so that the next offer of it is handled afresh.
    host.report(a, opId, {
      ...phase(OperationPhase.DEFERRED, from),
      code: "deferred",
      message: "busy (simulated)",
    });
    (a.record.deferrals as { operationId: string; at: number }[]).push({
      operationId: opId,
      at: host.now(),
    });
    a.handled.delete(opId);
    done(host, a);
    return;
  }
  beginAct(host, a, opId, "upgrade");
  const steps = [
    OperationPhase.ACCEPTED,
    OperationPhase.DOWNLOADING,
    OperationPhase.VERIFYING,
    OperationPhase.APPLYING,
  ];
  const run = (i: number) => {
    if (i < steps.length) {
      // The artifact is fetched between the DOWNLOADING and the VERIFYING reports.
      if (steps[i] === OperationPhase.VERIFYING) endDownload(a.record, host.now());
      host.report(a, opId, phase(steps[i] as OperationPhase));
      if (steps[i] === OperationPhase.DOWNLOADING) beginDownload(a.record, opId, host.now());
      if (s.behaviour === "dup_reports" && i > 0) {
        // An older phase arrives again after a newer one.
        host.report(a, opId, phase(steps[i - 1] as OperationPhase));
        a.handled.set(opId, phase(steps[i] as OperationPhase));
      }
      if (s.behaviour === "silent" && i === 0) {
        host.hang(s.id);
        return;
      }
      host.later(a, s.stepMs, () => run(i + 1));
      return;
    }
    apply(host, a, opId);
    if (s.behaviour === "fail") {
      host.report(a, opId, { ...phase(OperationPhase.FAILED, from), code: "apply_failed" });
      done(host, a);
      return;
    }
    if (s.behaviour === "health_fail") {
      healthFail(host, a, opId, from, version, sequence);
      return;
    }
    if (s.behaviour === "fail_on_target") {
      // It runs the target, yet says it failed; then restarts and says Hello on the target.
      a.previousVersion = from;
      a.sequences.set(version, sequence);
      runVersion(host, a, version, sequence);
      host.report(a, opId, { ...phase(OperationPhase.FAILED, from), code: "apply_failed" });
      host.restart(a, s.restartMs);
      return;
    }
    if (s.behaviour !== "revert") {
      a.previousVersion = from;
      a.sequences.set(version, sequence);
      runVersion(host, a, version, sequence);
      a.configBroken = s.behaviour === "config_fail";
    }
    host.report(a, opId, phase(OperationPhase.RESTARTING));
    if (s.behaviour === "never_return") {
      host.disconnect(s.id, "gone");
      a.restarting = true;
      return;
    }
    const restartMs = s.behaviour === "late_return" ? host.lateAfterMs + s.restartMs : s.restartMs;
    host.restart(a, restartMs);
  };
  run(0);
}

/**
 * As the real Agent: it restarts on the target and runs the release's health checks before it
 * connects; one fails, so its supervisor moves it back to `from` (the previous version as it
 * was), and once welcomed it reports FAILED health_check_failed.
 */
function healthFail(
  host: AgentHost,
  a: SimAgent,
  opId: string,
  from: string,
  version: string,
  sequence: number,
): void {
  const before = a.previousVersion;
  a.sequences.set(version, sequence);
  runVersion(host, a, version, sequence);
  host.report(a, opId, {
    phase: OperationPhase.RESTARTING,
    version,
    code: "",
    message: "",
  });
  host.restart(a, a.script.restartMs, () => {
    runVersion(host, a, from, a.sequences.get(from));
    a.previousVersion = before;
    (a.record.healthFailures as string[]).push(opId);
    a.handled.set(opId, {
      ...fail(from, "health_check_failed"),
      message: `${version} failed health check "probe" (simulated); reverted to ${from}`,
    });
    a.pendingFailure = opId;
  });
}

function rollback(host: AgentHost, a: SimAgent, opId: string, version: string): void {
  const s = a.script;
  if (s.rollback === "silent") {
    done(host, a);
    return;
  }
  if (s.rollback === "fail") {
    host.report(a, opId, fail(a.version, "rollback_failed"));
    done(host, a);
    return;
  }
  const current = a.version;
  if (version !== "" && version === current) {
    host.report(a, opId, {
      phase: OperationPhase.REINSTATED,
      version: current,
      code: "",
      message: "already running this version",
    });
    done(host, a);
    return;
  }
  const previous = a.previousVersion;
  if (previous === "" && version === "") {
    host.report(a, opId, {
      phase: OperationPhase.REINSTATED,
      version: current,
      code: "",
      message: "no previous release",
    });
    done(host, a);
    return;
  }
  if (previous === "" || (version !== "" && version !== previous)) {
    host.report(a, opId, fail(current, "no_previous_version"));
    done(host, a);
    return;
  }
  beginAct(host, a, opId, "rollback");
  host.report(a, opId, {
    phase: OperationPhase.ACCEPTED,
    version: previous,
    code: "",
    message: "",
  });
  apply(host, a, opId);
  runVersion(host, a, previous, a.sequences.get(previous));
  a.previousVersion = current;
  a.configBroken = false;
  a.pendingReinstate = opId;
  host.report(a, opId, {
    phase: OperationPhase.RESTARTING,
    version: previous,
    code: "",
    message: "",
  });
  host.restart(a, s.restartMs);
}

function fail(version: string, code: string): Report {
  return { phase: OperationPhase.FAILED, version, code, message: `${code} (simulated)` };
}
