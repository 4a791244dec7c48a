/**
 * The simulated applier: what "apply" means for a simulated Agent. Nothing is written
 * anywhere; the versions change in its durable state, and its scripted behaviour decides
 * whether it refuses, fails, comes back on the old version or with a broken configuration, or
 * switches to a new version that will fail its health check (see {@link HealthTrial}).
 */

import { type DurableState, rememberReport } from "../agent/core/durable-state.js";
import type { Applier, ApplyOutcome } from "../agent/core/operations.js";
import type { AcceptedUpgrade } from "../agent/core/release-check.js";
import { OperationPhase } from "../proto/gen/agentcontrol/v1/agent_control_pb.js";
import type { AgentBehaviour } from "./behaviours.js";

/**
 * An upgrade switched to by a `health-fail` agent: when it restarts into `to`, the version's
 * health check fails and the agent goes back to `from`, as the real Agent's supervisor does.
 */
export interface HealthTrial {
  readonly opId: string;
  readonly from: string;
  readonly to: string;
  /** The previous version before the switch (restored with `from`). */
  readonly previousBefore: string;
  /** The check that fails: the release's first, or `simulated` when it names none. */
  readonly check: string;
}

/** What the simulated applier reads of its agent. */
export interface SimApplierHost {
  /** Its behaviour now (it may be changed while the agent runs). */
  behaviour(): Readonly<AgentBehaviour>;
  readonly state: DurableState;
  /** Versions every agent of the fleet fails to apply. */
  readonly failVersions: ReadonlySet<string>;
  /** Told of an upgrade whose version will fail its health check at the restart. */
  onHealthTrial(trial: HealthTrial): void;
}

/** The applier of one simulated agent, following its behaviour at the moment it applies. */
export function simApplier(host: SimApplierHost): Applier {
  return {
    refuseUpgrade(): ApplyOutcome {
      switch (host.behaviour().upgrade) {
        case "no-upgrade-cap":
          return { code: "upgrade_unsupported", message: "this agent does not offer upgrade.v1" };
        case "refuse":
          return { code: "agent_refused", message: "this agent refuses upgrades (simulated)" };
        default:
          return undefined;
      }
    },
    async applyUpgrade(opId: string, from: string, upgrade: AcceptedUpgrade) {
      const { version } = upgrade;
      const reaction = host.behaviour().upgrade;
      if (reaction === "fail" || host.failVersions.has(version)) {
        return { code: "apply_failed", message: `applying ${version} failed (simulated)` };
      }
      if (reaction === "health-fail") {
        host.onHealthTrial({
          opId,
          from,
          to: version,
          previousBefore: host.state.previousVersion,
          check: upgrade.health?.checks[0]?.name ?? "simulated",
        });
      }
      if (reaction !== "revert") {
        host.state.previousVersion = from;
        host.state.version = version;
        host.state.configBroken = reaction === "config-fail";
      }
      return undefined;
    },
    async applyRollback(_opId: string, from: string, to: string) {
      host.state.version = to;
      host.state.previousVersion = from;
      host.state.configBroken = false;
      return undefined;
    },
    async applyConfirm() {},
  };
}

/**
 * After a restart into `trial.to`: its health check fails and the agent is back on the version
 * it came from, its upgrade recorded FAILED `health_check_failed` and pending (sent once
 * welcomed), as the real Agent's supervisor reverts it. False (nothing changed) when the agent
 * no longer runs `trial.to` (a rollback came first).
 */
export function revertFailedTrial(state: DurableState, trial: HealthTrial): boolean {
  if (state.version !== trial.to) return false;
  state.version = trial.from;
  state.previousVersion = trial.previousBefore === trial.from ? "" : trial.previousBefore;
  state.configBroken = false;
  rememberReport(state, trial.opId, {
    phase: OperationPhase.FAILED,
    version: trial.from,
    code: "health_check_failed",
    message: `${trial.to} failed health check "${trial.check}" (simulated) exited with code 1, expected 0; reverted to ${trial.from}`,
  });
  state.pendingReport = trial.opId;
  return true;
}
