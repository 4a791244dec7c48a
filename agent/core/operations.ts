/**
 * How an Agent handles Operations, whatever applies them: at-least-once delivery made
 * idempotent (an id already handled is re-answered with its last report, never applied
 * again), release verification before anything is fetched, a download of at most `size`
 * bytes checked against the signed sha256, and the upgrade, rollback and confirm
 * procedures with the phases SPEC §2 names. What "apply" means is the {@link Applier}'s:
 * files and a `current` link for the real Agent, a field in memory for the simulator.
 */
import {
  type AgentRollback,
  type AgentUpgrade,
  type Operation,
  OperationPhase,
} from "../../proto/gen/agentcontrol/v1/agent_control_pb.js";
import { confirm } from "./confirm.js";
import {
  type DurableState,
  type ReportedState,
  recordSequence,
  rememberReport,
  reportOf,
  setReport,
} from "./durable-state.js";
import type { OperationHost, Reporter } from "./operation-host.js";
import { noteTrust } from "./trust-state.js";
import { sleep } from "./waker.js";

export type {
  Applier,
  ApplyFailure,
  ApplyOutcome,
  ArtifactRequest,
  OperationHost,
  RestartKind,
} from "./operation-host.js";

const PENDING: ReportedState = Object.freeze({
  phase: OperationPhase.UNSPECIFIED,
  version: "",
  code: "",
  message: "",
});

/**
 * The longest operation id an agent takes (Control refuses a report id over 256 characters;
 * its own ids are far shorter). A longer one would be kept in state.json and in logs.
 */
export const MAX_OPERATION_ID_CHARS = 256;

/**
 * Handles one delivered Operation. A redelivered id is answered at once with the last
 * report made for it (nothing while it still waits its turn) and never applied again; a new
 * one is queued behind the agent's other operations. An id over
 * {@link MAX_OPERATION_ID_CHARS} is refused with one log line: not queued, remembered or
 * answered. Never rejects: failures become FAILED.
 */
export function deliverOperation(host: OperationHost, op: Operation): Promise<void> {
  if (op.id.length > MAX_OPERATION_ID_CHARS) {
    host.log.warn(
      { opIdStart: op.id.slice(0, 64), idLength: op.id.length, max: MAX_OPERATION_ID_CHARS },
      "refusing an operation: its operation id is too long",
    );
    return Promise.resolve();
  }
  const prior = reportOf(host.state, op.id);
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
    host.log.error({ err: error, opId: op.id }, "operation failed unexpectedly");
    await reporter(OperationPhase.FAILED, host.state.version, "internal", String(error));
  } finally {
    host.busy = false;
  }
}

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
  if (host.stepMs > 0) await sleep(host.stepMs, host.signal);
}

async function upgrade(host: OperationHost, opId: string, op: AgentUpgrade, report: Reporter) {
  const { REFUSED, FAILED, ACCEPTED, DOWNLOADING, VERIFYING, APPLYING, RESTARTING } =
    OperationPhase;
  const from = host.state.version;
  const refusal = host.applier.refuseUpgrade();
  if (refusal !== undefined) return report(REFUSED, from, refusal.code, refusal.message);
  host.busy = true;
  const { verifier, pins, threshold } = host.trust;
  const verdict = await verifier.check(op, {
    platform: host.platform,
    confirmedSequence: BigInt(host.state.confirmedSequence),
    ...(host.state.installedSequence === undefined
      ? {}
      : { installedSequence: BigInt(host.state.installedSequence) }),
    runningVersion: from,
    pins,
    threshold,
    now: new Date(),
  });
  if (!verdict.ok) return report(REFUSED, from, verdict.code, verdict.message);
  const accepted = verdict.upgrade;
  if (host.trust.tuf !== undefined) {
    const listed = await host.trust.tuf.check(accepted, host.platform);
    noteTrust(host, listed, new Date());
    if (!listed.ok) return report(REFUSED, from, listed.code, listed.message);
  }
  const busy = await host.deferral?.();
  if (busy !== undefined && host.deferNegotiated?.() === false) {
    return report(
      REFUSED,
      from,
      "defer_unsupported",
      `busy (${busy}), and this session did not negotiate defer.v1`,
    );
  }
  if (busy !== undefined) {
    // Not now: nothing is applied, and the operation is forgotten, so Control's next offer
    // of it is handled afresh.
    await report(OperationPhase.DEFERRED, from, "deferred", busy);
    delete host.state.handled[opId];
    await host.persist();
    return;
  }
  const { version, artifact } = accepted;
  await step(host, report, ACCEPTED, version);
  await step(host, report, DOWNLOADING, version);
  let bytes: Uint8Array | undefined;
  const fetching = host.fetch(artifact, host.signal);
  if (fetching !== undefined) {
    const fetched = await fetching;
    if (!fetched.ok) return report(FAILED, from, fetched.code, fetched.message);
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
    bytes = got.bytes;
  } else {
    await step(host, report, VERIFYING, version);
  }
  await step(host, report, APPLYING, version);
  // Recorded before the switch, so a confirm after any restart finds the verified sequence.
  recordSequence(host.state, version, accepted.sequence, [from]);
  await host.persist();
  host.countApplication(opId);
  const failure = await host.applier.applyUpgrade(opId, from, accepted, bytes);
  if (failure !== undefined) return report(FAILED, from, failure.code, failure.message);
  await report(RESTARTING, version);
  host.restart("upgrade");
}

/**
 * Reinstates the release this node recorded as its previous one, and nothing else: a rollback
 * naming another version fails `no_previous_version`. Neither the release's signature expiry
 * nor the channel's current TUF listing is checked, by decision (docs/decisions.md, "An
 * Agent's rollback goes to its recorded previous release, whatever its trust now"): the node
 * verified that release when it installed it, no bytes or metadata come with a rollback, the
 * sequence floors do not move, and a newer release delists it from the channel the moment an
 * operator needs the way back.
 */
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
  const refusal = await host.applier.checkRollback?.(previous);
  if (refusal !== undefined) return report(FAILED, current, refusal.code, refusal.message);
  await report(ACCEPTED, previous);
  host.countApplication(opId);
  const failure = await host.applier.applyRollback(opId, current, previous);
  if (failure !== undefined) return report(FAILED, current, failure.code, failure.message);
  host.state.pendingReinstate = opId;
  await report(RESTARTING, previous);
  host.restart("rollback");
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
      setReport(state, id, {
        phase: OperationPhase.FAILED,
        version: state.version,
        code: "interrupted",
        message: "the agent stopped while handling this operation",
      });
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

/**
 * Once welcomed: sends the stored report of the operation `state.pendingReport` names (an
 * upgrade reverted while the agent restarted into it) and clears the mark, durably first.
 */
export function reportPending(host: OperationHost): void {
  const opId = host.state.pendingReport;
  if (opId === undefined) return;
  delete host.state.pendingReport;
  const report = reportOf(host.state, opId);
  void host.persist().then(() => {
    if (report !== undefined) host.send(opId, report);
  });
}
