/**
 * The simulated applier: what "apply" means for a simulated Agent. Nothing is written
 * anywhere; the versions change in its durable state, and its scripted behaviour decides
 * whether it refuses, fails, comes back on the old version or with a broken configuration.
 */

import type { DurableState } from "../agent/core/durable-state.js";
import type { Applier, ApplyOutcome } from "../agent/core/operations.js";
import type { AcceptedUpgrade } from "../agent/core/release-check.js";
import type { AgentBehaviour } from "./behaviours.js";

/** What the simulated applier reads of its agent. */
export interface SimApplierHost {
  /** Its behaviour now (it may be changed while the agent runs). */
  behaviour(): Readonly<AgentBehaviour>;
  readonly state: DurableState;
  /** Versions every agent of the fleet fails to apply. */
  readonly failVersions: ReadonlySet<string>;
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
    async applyUpgrade(_opId: string, from: string, upgrade: AcceptedUpgrade) {
      const { version } = upgrade;
      const reaction = host.behaviour().upgrade;
      if (reaction === "fail" || host.failVersions.has(version)) {
        return { code: "apply_failed", message: `applying ${version} failed (simulated)` };
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
