/**
 * The real applier: an upgrade writes the verified artifact to `versions/<v>/`, records
 * the switch and the highest sequence installed, and moves `current` to it (the previous
 * version is kept); a rollback moves
 * `current` back, and is refused (`previous_version_missing`, never applied) when that version
 * is not installed; a confirm deletes every version but the confirmed one. The state is saved before the
 * link moves, so the supervisor can always tell a switch that happened from one that did not.
 */

import type { AgentState } from "./agent-state.js";
import { raiseInstalledSequence } from "./core/durable-state.js";
import type { AgentLog } from "./core/log.js";
import type { Applier, ApplyOutcome } from "./core/operations.js";
import type { AcceptedUpgrade } from "./core/release-check.js";
import {
  type InstallPaths,
  installedArtifact,
  installVersion,
  removeVersionsBut,
  switchCurrent,
} from "./install-dir.js";
import { PREVIOUS_VERSION_MISSING } from "./reconcile.js";

/** The code of an upgrade or rollback not made because its switch could not be saved. */
export const STATE_UNWRITABLE = "state_unwritable";

/** The state fields a switch changes. */
interface SwitchFields {
  readonly pending: AgentState["switch"];
  readonly version: string;
  readonly previousVersion: string;
  readonly installedSequence: string | undefined;
  readonly pendingReinstate: string | undefined;
}

/** What the real applier needs of its Agent. */
export interface RealApplierHost {
  readonly paths: InstallPaths;
  readonly state: AgentState;
  readonly log: AgentLog;
  /** Saves the state durably before resolving; rejects when it could not be saved. */
  persist(): Promise<void>;
}

/** The applier of a real Agent installed in `host.paths`. */
export function realApplier(host: RealApplierHost): Applier {
  const { paths, state } = host;
  /** A rollback to `to` is refused, with one log line, when `to` is not installed. */
  async function rollbackRefusal(to: string, opId?: string): Promise<ApplyOutcome> {
    if ((await installedArtifact(paths, to)) !== undefined) return undefined;
    host.log.error(
      { ...(opId === undefined ? {} : { opId }), version: to, current: state.version },
      "refusing a rollback: the previous version is not installed",
    );
    return {
      code: PREVIOUS_VERSION_MISSING,
      message: `cannot reinstate ${to}: ${to} is not installed (no artifact under versions/${to})`,
    };
  }
  /** The fields a switch changes, as they are now (to undo it when it cannot be saved). */
  function switchFields(): SwitchFields {
    const {
      switch: pending,
      version,
      previousVersion,
      installedSequence,
      pendingReinstate,
    } = state;
    return { pending, version, previousVersion, installedSequence, pendingReinstate };
  }
  /**
   * Saves the switch about to be made, or, when the state cannot be written, puts `before`
   * back and answers `state_unwritable`: a switch the supervisor has no record of could never
   * be reverted, so `current` does not move.
   */
  async function savedOrUndone(before: SwitchFields, opId: string): Promise<ApplyOutcome> {
    try {
      await host.persist();
      return undefined;
    } catch (error) {
      for (const [field, value] of [
        ["switch", before.pending],
        ["version", before.version],
        ["previousVersion", before.previousVersion],
        ["installedSequence", before.installedSequence],
        ["pendingReinstate", before.pendingReinstate],
      ] as const) {
        if (value === undefined) delete state[field];
        else (state as unknown as Record<string, unknown>)[field] = value;
      }
      host.log.error({ opId, err: String(error) }, "cannot record the switch; not switching");
      return {
        code: STATE_UNWRITABLE,
        message: `the switch could not be recorded in state.json: ${String(error)}`,
      };
    }
  }
  return {
    refuseUpgrade: () => undefined,

    async applyUpgrade(
      opId: string,
      from: string,
      upgrade: AcceptedUpgrade,
      bytes?: Uint8Array,
    ): Promise<ApplyOutcome> {
      const to = upgrade.version;
      if (bytes === undefined) {
        return { code: "apply_failed", message: "the artifact was not downloaded" };
      }
      if (to === from) {
        return { code: "apply_failed", message: `${to} is the version running` };
      }
      try {
        await installVersion(paths, to, bytes);
      } catch (error) {
        return { code: "apply_failed", message: `could not install ${to}: ${String(error)}` };
      }
      const before = switchFields();
      state.switch = {
        kind: "upgrade",
        opId,
        from,
        to,
        previousBefore: state.previousVersion,
        ...(upgrade.health === undefined ? {} : { health: upgrade.health }),
        ...(upgrade.supervisor === true ? { supervisor: true } : {}),
      };
      state.previousVersion = from;
      state.version = to;
      raiseInstalledSequence(state, upgrade.sequence);
      const unsaved = await savedOrUndone(before, opId);
      if (unsaved !== undefined) return unsaved;
      await switchCurrent(paths, to);
      return undefined;
    },

    checkRollback: (to: string) => rollbackRefusal(to),

    async applyRollback(opId: string, from: string, to: string): Promise<ApplyOutcome> {
      const refusal = await rollbackRefusal(to, opId);
      if (refusal !== undefined) return refusal;
      const before = switchFields();
      state.switch = { kind: "rollback", opId, from, to, previousBefore: state.previousVersion };
      state.version = to;
      state.previousVersion = from;
      state.pendingReinstate = opId;
      const unsaved = await savedOrUndone(before, opId);
      if (unsaved !== undefined) return unsaved;
      await switchCurrent(paths, to);
      return undefined;
    },

    async applyConfirm(_opId: string, version: string): Promise<void> {
      if (state.previousVersion !== "") {
        state.previousVersion = "";
        await host.persist();
      }
      await removeVersionsBut(paths, version);
    },
  };
}
