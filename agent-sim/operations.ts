/**
 * How an agent handles Operations: at-least-once delivery made idempotent (an id already
 * handled is re-answered with its last report, never applied again), and the upgrade,
 * rollback and confirm procedures with the phases SPEC §2 names.
 */
import {
  type AgentConfirm,
  type AgentRollback,
  type AgentUpgrade,
  type Operation,
  OperationPhase,
} from "../proto/gen/agentcontrol/v1/agent_control_pb.js";
import type { AgentBehaviour } from "./behaviours.js";
import { downloadAuthorization } from "./download.js";
import { type DurableState, type ReportedState, rememberReport } from "./durable-state.js";
import type { AgentRuntime } from "./runtime.js";
import { sleep } from "./waker.js";

/** Why the agent restarts: the version it comes back on is already in its durable state. */
export type RestartKind = "upgrade" | "rollback";

/** What operation handling needs from its agent. */
export interface OperationHost {
  readonly platform: string;
  readonly behaviour: AgentBehaviour;
  readonly state: DurableState;
  readonly runtime: AgentRuntime;
  /** Aborted when the agent stops. */
  readonly signal: AbortSignal;
  /** An upgrade is in progress. */
  busy: boolean;
  /** A restart was decided and the agent has not started again yet. */
  readonly restarting: boolean;
  /** Sends an ObservedState on the current stream, if any. */
  send(opId: string, report: ReportedState): void;
  /** Saves the durable state (coalesced; resolves once written). */
  persist(): Promise<void>;
  /** Counts one application of `opId` (the effect, not the delivery). */
  countApplication(opId: string): void;
  /** Counts one redelivery that was answered from memory. */
  countDuplicate(): void;
  /** Ends the stream gracefully and restarts the agent (new boot id). */
  restart(kind: RestartKind): void;
  /** Runs `task` after every task enqueued before it (operations apply one at a time). */
  enqueue(task: () => Promise<void>): Promise<void>;
}

const PENDING: ReportedState = Object.freeze({
  phase: OperationPhase.UNSPECIFIED,
  version: "",
  code: "",
  message: "",
});

/**
 * Handles one delivered Operation. A redelivered id is answered at once with the last
 * report made for it (nothing while it still waits its turn) and never applied again; a new
 * one is queued behind the agent's other operations. Never rejects: failures become FAILED.
 */
export function deliverOperation(host: OperationHost, op: Operation): Promise<void> {
  const prior = host.state.handled[op.id];
  if (prior !== undefined) {
    host.countDuplicate();
    if (prior.phase !== OperationPhase.UNSPECIFIED) host.send(op.id, prior);
    return Promise.resolve();
  }
  rememberReport(host.state, op.id, PENDING);
  return host.enqueue(() => runOperation(host, op));
}

async function runOperation(host: OperationHost, op: Operation): Promise<void> {
  if (host.signal.aborted) return;
  if (host.restarting) {
    // The simulated process is going down: what it had not started is lost with it, and
    // Control redelivers it on the next stream.
    delete host.state.handled[op.id];
    return;
  }
  const reporter = makeReporter(host, op.id);
  try {
    switch (op.kind.case) {
      case "agentUpgrade":
        await upgrade(host, op.id, op.kind.value, reporter);
        return;
      case "agentRollback":
        await rollback(host, op.id, op.kind.value, reporter);
        return;
      case "agentConfirm":
        await confirm(host, op.id, op.kind.value, reporter);
        return;
      default:
        await reporter(OperationPhase.REFUSED, host.state.version, "unknown_operation");
    }
  } catch (error) {
    if (host.signal.aborted) return;
    host.runtime.log.error({ err: error, opId: op.id }, "operation failed unexpectedly");
    await reporter(OperationPhase.FAILED, host.state.version, "internal", String(error));
  } finally {
    host.busy = false;
  }
}

type Reporter = (
  phase: OperationPhase,
  version: string,
  code?: string,
  message?: string,
) => Promise<void>;

function makeReporter(host: OperationHost, opId: string): Reporter {
  return async (phase, version, code = "", message = "") => {
    if (host.signal.aborted) return;
    const report = { phase, version, code, message };
    rememberReport(host.state, opId, report);
    await host.persist();
    host.send(opId, report);
  };
}

async function step(host: OperationHost, report: Reporter, phase: OperationPhase, version: string) {
  await report(phase, version);
  if (host.runtime.settings.stepMs > 0) await sleep(host.runtime.settings.stepMs, host.signal);
}

async function upgrade(host: OperationHost, opId: string, op: AgentUpgrade, report: Reporter) {
  const { settings, verifier, artifacts } = host.runtime;
  const { REFUSED, FAILED, ACCEPTED, DOWNLOADING, VERIFYING, APPLYING, RESTARTING } =
    OperationPhase;
  const from = host.state.version;
  if (host.behaviour.upgrade === "no-upgrade-cap") {
    return report(REFUSED, from, "upgrade_unsupported", "this agent does not offer upgrade.v1");
  }
  if (host.behaviour.upgrade === "refuse") {
    return report(REFUSED, from, "agent_refused", "this agent refuses upgrades (simulated)");
  }
  host.busy = true;
  const verdict = await verifier.check(op, {
    platform: host.platform,
    confirmedSequence: BigInt(host.state.confirmedSequence),
    pins: settings.pins,
    threshold: settings.threshold,
    now: new Date(),
  });
  if (!verdict.ok) return report(REFUSED, from, verdict.code, verdict.message);
  const { version, artifact } = verdict.upgrade;
  await step(host, report, ACCEPTED, version);
  await step(host, report, DOWNLOADING, version);
  if (settings.download) {
    const authorization = downloadAuthorization(
      artifact.url,
      host.runtime.server,
      host.state.nodeToken,
    );
    const fetched = await artifacts.get({ ...artifact, authorization }, host.signal);
    if (!fetched.ok) {
      return report(FAILED, from, fetched.code, fetched.message);
    }
    await step(host, report, VERIFYING, version);
    const got = fetched.artifact;
    if (got.bytes.byteLength !== artifact.size || got.sha256 !== artifact.sha256) {
      return report(
        FAILED,
        from,
        "sha256_mismatch",
        `downloaded sha256 ${got.sha256}, expected ${artifact.sha256}`,
      );
    }
  } else {
    await step(host, report, VERIFYING, version);
  }
  await step(host, report, APPLYING, version);
  host.countApplication(opId);
  if (host.behaviour.upgrade === "fail" || settings.failVersions.has(version)) {
    return report(FAILED, from, "apply_failed", `applying ${version} failed (simulated)`);
  }
  if (host.behaviour.upgrade !== "revert") {
    host.state.previousVersion = from;
    host.state.version = version;
    host.state.configBroken = host.behaviour.upgrade === "config-fail";
  }
  await report(RESTARTING, version);
  host.restart("upgrade");
}

async function rollback(host: OperationHost, opId: string, op: AgentRollback, report: Reporter) {
  const { FAILED, ACCEPTED, RESTARTING, REINSTATED } = OperationPhase;
  const current = host.state.version;
  if (op.version !== "" && op.version === current) {
    return report(REINSTATED, current, "", "already running this version");
  }
  const previous = host.state.previousVersion;
  if (previous === "" && op.version === "") {
    // Nothing was ever applied over this release: it already runs what it had.
    return report(REINSTATED, current, "", "no previous release; already on the original one");
  }
  if (previous === "" || (op.version !== "" && op.version !== previous)) {
    return report(
      FAILED,
      current,
      "no_previous_version",
      `cannot reinstate ${op.version || "a previous release"}: the previous release is ${previous || "none"}`,
    );
  }
  await report(ACCEPTED, previous);
  host.countApplication(opId);
  host.state.version = previous;
  host.state.previousVersion = current;
  host.state.configBroken = false;
  host.state.pendingReinstate = opId;
  await report(RESTARTING, previous);
  host.restart("rollback");
}

async function confirm(host: OperationHost, opId: string, op: AgentConfirm, report: Reporter) {
  const current = host.state.version;
  if (op.version !== current) {
    return report(
      OperationPhase.FAILED,
      current,
      "version_mismatch",
      `running ${current}, not ${op.version}`,
    );
  }
  host.countApplication(opId);
  if (op.sequence > BigInt(host.state.confirmedSequence)) {
    host.state.confirmedSequence = op.sequence.toString();
  }
  await report(OperationPhase.CONFIRMED, current);
}

/**
 * Makes loaded state consistent after the simulator process itself was stopped: an
 * operation that was being checked is forgotten (its redelivery is handled afresh), one
 * that was mid-upgrade is reported FAILED (`interrupted`) from now on.
 */
export function recoverInterrupted(state: DurableState): void {
  const inProgress = new Set<number>([
    OperationPhase.ACCEPTED,
    OperationPhase.DOWNLOADING,
    OperationPhase.VERIFYING,
    OperationPhase.APPLYING,
  ]);
  for (const [id, report] of Object.entries(state.handled)) {
    if (report.phase === OperationPhase.UNSPECIFIED) delete state.handled[id];
    else if (inProgress.has(report.phase) && state.pendingReinstate !== id) {
      state.handled[id] = {
        phase: OperationPhase.FAILED,
        version: state.version,
        code: "interrupted",
        message: "the agent stopped while handling this operation",
      };
    }
  }
}

/**
 * After a rollback restart, once welcomed: reports REINSTATED on the version it came back
 * on for the rollback operation that caused the restart (durably, then on the stream).
 */
export function reportReinstated(host: OperationHost): void {
  const opId = host.state.pendingReinstate;
  if (opId === undefined) return;
  delete host.state.pendingReinstate;
  const report = {
    phase: OperationPhase.REINSTATED,
    version: host.state.version,
    code: "",
    message: "",
  };
  rememberReport(host.state, opId, report);
  void host.persist().then(() => host.send(opId, report));
}
