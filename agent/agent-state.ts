/**
 * The real Agent's durable state: the core's (node id, node token, versions, confirmed
 * sequence, handled operations) plus the switch in progress, kept in `DIR/state.json`.
 * Only one process writes it at a time: the running Agent while it runs, the supervisor
 * only between two runs.
 */
import { readFile } from "node:fs/promises";
import type { ReleaseHealth } from "../control/shared/release/index.js";
import {
  type DurableState,
  parseState,
  raiseInstalledSequence,
  writeFileDurably,
} from "./core/durable-state.js";
import type { InstallPaths } from "./install-dir.js";

/**
 * A switch of `current` that is not settled yet. An upgrade stays on trial until the new
 * version is welcomed by Control; the supervisor reverts it when it crashes or is not
 * welcomed within its deadline. A rollback is settled as soon as the link has moved.
 */
export interface PendingSwitch {
  readonly kind: "upgrade" | "rollback";
  /** The operation that asked for it. */
  readonly opId: string;
  readonly from: string;
  readonly to: string;
  /** The previous version before the switch (restored when the switch is undone). */
  readonly previousBefore: string;
  /** An upgrade's signed health checks, run by the new version before it connects. */
  readonly health?: ReleaseHealth;
  /** An upgrade whose verified release carries its supervisor (tried as the supervisor). */
  readonly supervisor?: true;
}

/** What the real Agent keeps across restarts. */
export interface AgentState extends DurableState {
  /** The switch in progress, if any. */
  switch?: PendingSwitch;
  /** Why the version on trial failed its health checks (written by it, read by the supervisor). */
  healthFailure?: { readonly opId: string; readonly message: string };
  /**
   * Control welcomed the node on a stream authenticated by its client certificate, without
   * a node token (it enrolled by certificate, not a join token).
   */
  certificateEnrolled?: boolean;
}

/** A fresh state for a node that has just been installed at `version`. */
export function initialState(nodeId: string, version: string): AgentState {
  return { nodeId, version, previousVersion: "", confirmedSequence: "0", handled: {} };
}

/** The saved state, or undefined when there is none yet. Throws on a damaged file. */
export async function loadState(paths: InstallPaths): Promise<AgentState | undefined> {
  let text: string;
  try {
    text = await readFile(paths.state, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  const state = parseState(text) as AgentState;
  // An install whose state predates `installedSequence` gets its floor from its sequences.
  raiseInstalledSequence(state);
  return state;
}

/** Saves `state` atomically and durably. */
export function saveState(paths: InstallPaths, state: AgentState): Promise<void> {
  return writeFileDurably(paths.state, `${JSON.stringify(state, null, 2)}\n`);
}
