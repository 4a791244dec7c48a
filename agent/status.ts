/**
 * `agent status`: what an install directory holds, as one JSON object a script can read.
 */
import { readdir } from "node:fs/promises";
import type { PendingSwitch } from "./agent-state.js";
import { loadState } from "./agent-state.js";
import type { SupervisorFailure, SupervisorTrial } from "./core/supervisor-update.js";
import type { TrustState } from "./core/trust-state.js";
import { type InstallPaths, readCurrent } from "./install-dir.js";
import {
  installedSupervisors,
  readSupervisorInUse,
  readSupervisorRecord,
} from "./supervisor-dir.js";

/** The supervisor part of {@link AgentStatus}. */
export interface SupervisorStatus {
  /** The supervisor the pointer names (null: the one installed by hand). */
  readonly inUse: string | null;
  /** The supervisor kept to fall back to (null: the one installed by hand, or none recorded). */
  readonly previous: string | null;
  /** An update under way. */
  readonly trial: SupervisorTrial | null;
  /** The last update that failed (cleared by one that succeeds). */
  readonly failure: SupervisorFailure | null;
  /** Supervisors installed from releases (under supervisors/). */
  readonly installed: readonly string[];
}

/** The status of an install directory (SPEC §8 names the first five fields). */
export interface AgentStatus {
  /** The version `current` points at (null: nothing installed). */
  readonly current: string | null;
  /** The version a rollback reinstates (null: none kept). */
  readonly previous: string | null;
  /** Releases below this sequence are refused (decimal string of a uint64). */
  readonly confirmedSequence: string;
  /**
   * The highest sequence this node ever installed: upgrades below it are refused (decimal
   * string; "0" when none is recorded).
   */
  readonly installedSequence: string;
  /** A switch not settled yet: an upgrade on trial, or one interrupted. */
  readonly pending: PendingSwitch | null;
  readonly nodeId: string | null;
  /**
   * The node has enrolled: it holds a node token, or Control welcomed it by its client
   * certificate (mTLS, no join token).
   */
  readonly enrolled: boolean;
  /** How it enrolled: `token` (it holds a node token), `certificate`, or null (not yet). */
  readonly enrolledBy: "token" | "certificate" | null;
  /** Versions whose files are installed. */
  readonly installed: readonly string[];
  /**
   * The last TUF check (null: none yet, or TUF not configured); `frozen` on expired metadata,
   * with `since` (when it first found itself frozen).
   */
  readonly trust: TrustState | null;
  /** The node's supervisor: the one in use, the one kept, an update under way or failed. */
  readonly supervisor: SupervisorStatus;
}

/** Reads the status of `paths`; throws when its state file is damaged. */
export async function readStatus(paths: InstallPaths): Promise<AgentStatus> {
  const state = await loadState(paths);
  const current = (await readCurrent(paths)) ?? null;
  const record = await readSupervisorRecord(paths);
  let installed: string[] = [];
  try {
    installed = (await readdir(paths.versions)).sort();
  } catch {
    installed = [];
  }
  const enrolledBy =
    state?.nodeToken !== undefined
      ? "token"
      : state?.certificateEnrolled === true
        ? "certificate"
        : null;
  return {
    current,
    previous: state?.previousVersion || null,
    confirmedSequence: state?.confirmedSequence ?? "0",
    installedSequence: state?.installedSequence ?? "0",
    pending: state?.switch ?? null,
    nodeId: state?.nodeId ?? null,
    enrolled: enrolledBy !== null,
    enrolledBy,
    installed,
    trust: state?.trust ?? null,
    supervisor: {
      inUse: (await readSupervisorInUse(paths)) || null,
      previous: record?.previous || null,
      trial: record?.trial ?? null,
      failure: record?.failure ?? null,
      installed: await installedSupervisors(paths),
    },
  };
}
