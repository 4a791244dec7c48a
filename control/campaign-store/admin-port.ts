/**
 * The node side of the admin store port: the registry reads and writes of an administrator's
 * node commands (disable, enable, reset), in a fleet transaction ({@link FleetTransaction.nodes}),
 * so a command, its audit row and any campaign or plan rows it touches commit together. The
 * PostgreSQL adapter is `sql/admin-nodes.ts`, the memory adapter `memory/memory-admin-nodes.ts`;
 * both are held to the fleet store's contract tests.
 */

/** A node's administrative state as the admin commands read it. */
export interface AdminNodeRow {
  readonly id: string;
  /** False once an administrator disabled it. */
  readonly enabled: boolean;
  /** Why it was disabled; "" while enabled. */
  readonly disabledReason: string;
  /**
   * When an administrator last reset it (ms), while its next join-token enrollment is still to
   * come; undefined otherwise.
   */
  readonly resetAt: number | undefined;
}

/** The node registry writes of the admin commands, inside one fleet transaction. */
export interface AdminNodes {
  /** The node `id`; undefined when the registry has none. */
  readNode(id: string): Promise<AdminNodeRow | undefined>;
  /**
   * Enables or disables node `id` at `now`. A disabled node keeps `reason`; enabling clears it.
   * The row's version is bumped, so the node's other writers see the change.
   * @returns false when the registry has no such node (nothing is written).
   */
  setEnabled(id: string, enabled: boolean, reason: string, now: Date): Promise<boolean>;
  /**
   * Resets node `id` at `now`: its node token stops working, its next join-token enrollment is
   * accepted once, and once the transaction commits every Control is told (channel
   * `CUTOFF_CHANNEL`) to close the node's streams.
   * @returns false when the registry has no such node (nothing is written or sent).
   */
  resetCredential(id: string, now: Date): Promise<boolean>;
}
