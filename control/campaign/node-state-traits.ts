/**
 * Every rule that asks "which node states …?" answered once: one row of traits per
 * {@link NodeState}. The engine's predicates (`isFinal`, `inFlight`, …) and the store adapters'
 * lists and SQL fragments (`state in (...)`, the partial indexes of migrations 0022 and 0025)
 * are derived from this table, never written out again. A state added to `NodeState` fails to compile until
 * its row here says what it is. (`NodeState` is declared here, and re-exported by `model.ts`,
 * so that the table and the union live in one module without an import cycle.)
 */

/** Where one node of a campaign stands (proto `NodeState`). */
export type NodeState =
  | "waiting"
  | "offered"
  | "applying"
  | "restarting"
  | "verifying"
  | "succeeded"
  | "failed"
  | "timed_out"
  | "skipped"
  | "canceled"
  | "rolling_back"
  | "rolled_back"
  | "rollback_failed";

/** How a node in a state counts against its campaign's concurrency and its pool's budget. */
export type SlotUse =
  /** Always: it is being (or about to be) restarted by an operation. */
  | "always"
  /**
   * While its config grace runs (`graceEndsAt` unset or after now): back on the new release
   * but not yet trusted; past the grace it is only watched.
   */
  | "within_grace"
  /**
   * While a rollback its campaign sent it after it ended is pending (a final node that may run
   * the target, its state kept: `rollbackFinalNodes` in `rollback.ts`): `rollbackOperationId`
   * set and no `rollbackResult` recorded yet. Its agent may be restarting onto its previous
   * release, as disruptive as a node rolling back, which holds its slot until judged too; once
   * the outcome is recorded (when its batch's rollback ends), it holds none. Only for final
   * states: a node that was rolling back says its outcome by its state (rolled_back,
   * rollback_failed).
   */
  | "while_rollback_pending"
  /** Never. */
  | "never";

/** What a node state means to the rules that read it. */
export interface NodeStateTraits {
  /** The state never changes once set (the node's outcome in its campaign). */
  readonly final: boolean;
  /**
   * The node holds the upgrade and is not final (offered up to verifying): a rollback of its
   * batch turns it rolling_back.
   */
  readonly upgrading: boolean;
  /** The node counts as a failure toward its batch's threshold and the failure budget. */
  readonly failure: boolean;
  /**
   * The node is disrupting: it is (or may be, within a grace, or while a rollback sent to it
   * after it ended is pending) restarting or unproven because of an operation of its campaign,
   * so it holds a slot of its campaign's concurrency and of its pool's disruption budget,
   * counted over every unfinished campaign (`PoolLoad`). `inFlight` (`batch-rules.ts`) reads
   * it, and the stores' counts derive from it.
   */
  readonly holdsSlot: SlotUse;
  /**
   * The node belongs to its unfinished campaign whatever its batch: no other campaign may
   * start over it (`busyNodes`). A final node is busy only in a live campaign's current batch,
   * which may still roll back.
   */
  readonly busy: boolean;
  /**
   * Its unacknowledged upgrade operation is worth re-sending when it reconnects: the upgrade is
   * still what the campaign wants of it, if its campaign offers at the time
   * (`resend-rules.ts`). (Confirms and rollbacks are re-sent whatever the state.)
   */
  readonly resendUpgrade: boolean;
}

/** The traits of every node state, in lifecycle order. */
export const NODE_STATE_TRAITS: Readonly<Record<NodeState, NodeStateTraits>> = {
  waiting: {
    final: false,
    upgrading: false,
    failure: false,
    holdsSlot: "never",
    busy: true,
    resendUpgrade: false,
  },
  offered: {
    final: false,
    upgrading: true,
    failure: false,
    holdsSlot: "always",
    busy: true,
    resendUpgrade: true,
  },
  applying: {
    final: false,
    upgrading: true,
    failure: false,
    holdsSlot: "always",
    busy: true,
    resendUpgrade: true,
  },
  restarting: {
    final: false,
    upgrading: true,
    failure: false,
    holdsSlot: "always",
    busy: true,
    resendUpgrade: true,
  },
  verifying: {
    final: false,
    upgrading: true,
    failure: false,
    holdsSlot: "within_grace",
    busy: true,
    resendUpgrade: false,
  },
  succeeded: {
    final: true,
    upgrading: false,
    failure: false,
    holdsSlot: "never",
    busy: false,
    resendUpgrade: false,
  },
  // A final node that may run the target is sent its batch's rollback, its state kept: it holds
  // a slot while that rollback is pending (its agent may be restarting onto its previous release).
  failed: {
    final: true,
    upgrading: false,
    failure: true,
    holdsSlot: "while_rollback_pending",
    busy: false,
    resendUpgrade: false,
  },
  timed_out: {
    final: true,
    upgrading: false,
    failure: true,
    holdsSlot: "while_rollback_pending",
    busy: false,
    resendUpgrade: false,
  },
  skipped: {
    final: true,
    upgrading: false,
    failure: false,
    holdsSlot: "while_rollback_pending",
    busy: false,
    resendUpgrade: false,
  },
  canceled: {
    final: true,
    upgrading: false,
    failure: false,
    holdsSlot: "while_rollback_pending",
    busy: false,
    resendUpgrade: false,
  },
  // Restarting onto its previous release: as disruptive as the upgrade it undoes.
  rolling_back: {
    final: false,
    upgrading: false,
    failure: false,
    holdsSlot: "always",
    busy: true,
    resendUpgrade: false,
  },
  rolled_back: {
    final: true,
    upgrading: false,
    failure: false,
    holdsSlot: "never",
    busy: false,
    resendUpgrade: false,
  },
  rollback_failed: {
    final: true,
    upgrading: false,
    failure: false,
    holdsSlot: "never",
    busy: false,
    resendUpgrade: false,
  },
};

/** Every node state, in lifecycle order (the rows of {@link NODE_STATE_TRAITS}). */
export const NODE_STATES: readonly NodeState[] = Object.keys(NODE_STATE_TRAITS) as NodeState[];

/** True for the states that never change once set ({@link NodeStateTraits.final}). */
export function isFinal(state: NodeState): boolean {
  return NODE_STATE_TRAITS[state].final;
}

/** True while the node holds the upgrade: offered up to verifying, not final yet. */
export function isUpgrading(state: NodeState): boolean {
  return NODE_STATE_TRAITS[state].upgrading;
}

/** True for the states that count as a node failure toward a batch's threshold. */
export function isFailure(state: NodeState): boolean {
  return NODE_STATE_TRAITS[state].failure;
}

/** The states whose traits satisfy `test`, in lifecycle order. */
export function nodeStatesWhere(test: (t: NodeStateTraits) => boolean): readonly NodeState[] {
  return NODE_STATES.filter((s) => test(NODE_STATE_TRAITS[s]));
}

/** The final states ({@link NodeStateTraits.final}). */
export const FINAL_NODE_STATES: readonly NodeState[] = nodeStatesWhere((t) => t.final);

/** The states that count as a failure ({@link NodeStateTraits.failure}). */
export const FAILURE_NODE_STATES: readonly NodeState[] = nodeStatesWhere((t) => t.failure);

/**
 * The states in which a node holds a slot by its state, always or within its grace
 * ({@link NodeStateTraits.holdsSlot} `always` or `within_grace`): the predicate of the partial
 * index `campaign_nodes_slot_idx` (migration 0022).
 */
export const SLOT_NODE_STATES: readonly NodeState[] = nodeStatesWhere(
  (t) => t.holdsSlot === "always" || t.holdsSlot === "within_grace",
);

/**
 * The final states in which a node holds a slot while a rollback sent to it is pending
 * ({@link NodeStateTraits.holdsSlot} `while_rollback_pending`): the states of the partial index
 * `campaign_nodes_rollback_slot_idx` (migration 0025).
 */
export const ROLLBACK_SLOT_NODE_STATES: readonly NodeState[] = nodeStatesWhere(
  (t) => t.holdsSlot === "while_rollback_pending",
);

/** The states in which a node holds a slot only while its config grace runs. */
export const GRACE_SLOT_NODE_STATES: readonly NodeState[] = nodeStatesWhere(
  (t) => t.holdsSlot === "within_grace",
);

/** The states busy whatever their batch ({@link NodeStateTraits.busy}). */
export const BUSY_NODE_STATES: readonly NodeState[] = nodeStatesWhere((t) => t.busy);

/** The states whose unacknowledged upgrade is re-sent ({@link NodeStateTraits.resendUpgrade}). */
export const RESEND_UPGRADE_NODE_STATES: readonly NodeState[] = nodeStatesWhere(
  (t) => t.resendUpgrade,
);
