/**
 * The one table of node-state traits (control/campaign/node-state-traits.ts): what each state
 * means to the rules, the consistency the rules rely on between traits, and the engine's
 * predicates read from it.
 */
import { describe, expect, it } from "vitest";
import {
  awaitsRollback,
  BUSY_NODE_STATES,
  type CampaignNode,
  FAILURE_NODE_STATES,
  FINAL_NODE_STATES,
  GRACE_SLOT_NODE_STATES,
  holdsNodeBusy,
  inFlight,
  NODE_STATE_TRAITS,
  NODE_STATES,
  type NodeState,
  RESEND_UPGRADE_NODE_STATES,
  ROLLBACK_SLOT_NODE_STATES,
  SLOT_NODE_STATES,
} from "../../../control/campaign/index.js";
import { fleet, start } from "./harness.js";

const NOW = 1_000_000;

function nodeIn(state: NodeState, graceEndsAt?: number): CampaignNode {
  const h = start(fleet(1));
  const n = h.nodes[0] as CampaignNode;
  return { ...n, state, graceEndsAt };
}

describe("node-state traits", () => {
  it("lists every state once, in lifecycle order", () => {
    expect(NODE_STATES).toEqual([
      "waiting",
      "offered",
      "applying",
      "restarting",
      "verifying",
      "succeeded",
      "failed",
      "timed_out",
      "skipped",
      "canceled",
      "rolling_back",
      "rolled_back",
      "rollback_failed",
    ]);
  });

  it.each<[string, readonly NodeState[], readonly NodeState[]]>([
    [
      "final",
      FINAL_NODE_STATES,
      ["succeeded", "failed", "timed_out", "skipped", "canceled", "rolled_back", "rollback_failed"],
    ],
    ["failure", FAILURE_NODE_STATES, ["failed", "timed_out"]],
    [
      "holds a slot by its state",
      SLOT_NODE_STATES,
      ["offered", "applying", "restarting", "verifying", "rolling_back"],
    ],
    ["holds a slot only within its grace", GRACE_SLOT_NODE_STATES, ["verifying"]],
    [
      "holds a slot only while a rollback sent to it is pending",
      ROLLBACK_SLOT_NODE_STATES,
      ["failed", "timed_out", "skipped", "canceled"],
    ],
    [
      "busy whatever its batch",
      BUSY_NODE_STATES,
      ["waiting", "offered", "applying", "restarting", "verifying", "rolling_back"],
    ],
    ["upgrade re-sent", RESEND_UPGRADE_NODE_STATES, ["offered", "applying", "restarting"]],
  ])("%s: the derived list", (_what, derived, expected) => {
    expect(derived).toEqual(expected);
  });

  it.each(NODE_STATES)("%s: its traits agree with one another", (state) => {
    const t = NODE_STATE_TRAITS[state];
    // A final state is not upgrading and is busy only by its batch; it holds a slot only while
    // a rollback its campaign sent it after it ended is pending (its campaign is rolling back,
    // so it is busy by its batch then), and only a final state holds one so.
    if (t.final) {
      expect([t.upgrading, t.busy]).toEqual([false, false]);
      expect(["never", "while_rollback_pending"]).toContain(t.holdsSlot);
    }
    // Every state that is not final is busy: it is still on its way in its campaign.
    else {
      expect(t.busy).toBe(true);
      expect(t.holdsSlot).not.toBe("while_rollback_pending");
    }
    // A failure is final; an upgrade is re-sent only while the node holds a slot for it.
    if (t.failure) expect(t.final).toBe(true);
    if (t.resendUpgrade) expect([t.upgrading, t.holdsSlot]).toEqual([true, "always"]);
    // Every state that holds a slot by its state is disrupting: upgrading or rolling back.
    if (t.holdsSlot === "always" || t.holdsSlot === "within_grace")
      expect(t.upgrading || state === "rolling_back").toBe(true);
  });
});

describe("inFlight, read from the traits", () => {
  it.each<[NodeState, number | undefined, boolean]>([
    ["waiting", undefined, false],
    ["offered", undefined, true],
    ["applying", undefined, true],
    ["restarting", undefined, true],
    ["verifying", undefined, true],
    ["verifying", NOW + 1, true],
    ["verifying", NOW, false],
    ["rolling_back", undefined, true],
    ["succeeded", undefined, false],
    ["failed", undefined, false],
    ["rolled_back", undefined, false],
  ])("a node %s (grace ends %s) in flight: %s", (state, grace, expected) => {
    expect(inFlight(nodeIn(state, grace), NOW)).toBe(expected);
  });

  const sent = { rollbackOperationId: "c1/node-000/rollback", rollbackDeadline: NOW + 1 };
  it.each<[NodeState, Partial<CampaignNode>, boolean]>([
    ["failed", sent, true],
    ["timed_out", sent, true],
    ["skipped", sent, true],
    ["canceled", sent, true],
    ["failed", { ...sent, rollbackDeadline: undefined }, true],
    ["failed", { ...sent, rollbackDeadline: NOW }, true],
    ["failed", { ...sent, rollbackResult: "rolled_back" }, false],
    ["timed_out", { ...sent, rollbackResult: "rollback_unconfirmed" }, false],
    ["failed", { rollbackResult: "rollback_withheld" }, false],
    ["succeeded", sent, false],
    ["rolled_back", sent, false],
    ["rollback_failed", sent, false],
  ])("a final node %s sent a rollback (%j) in flight: %s", (state, rollback, expected) => {
    expect(inFlight({ ...nodeIn(state), ...rollback }, NOW)).toBe(expected);
  });
});

describe("holdsNodeBusy", () => {
  const running = { phase: "running" as const, currentBatch: 1, finishedAt: undefined };
  it.each<[string, Parameters<typeof holdsNodeBusy>[0], NodeState, number, boolean]>([
    ["a node rolling back in an earlier batch", running, "rolling_back", 0, true],
    ["a waiting node of a later batch", running, "waiting", 2, true],
    ["a succeeded node of an earlier batch", running, "succeeded", 0, false],
    [
      "a succeeded node of the current batch (it may still roll back)",
      running,
      "succeeded",
      1,
      true,
    ],
    [
      "a failed node of the current batch of a campaign rolling back",
      { ...running, phase: "rolling_back" },
      "failed",
      1,
      true,
    ],
    [
      "a failed node of the current batch of an ended campaign",
      { ...running, phase: "rolled_back" },
      "failed",
      1,
      false,
    ],
    ["any node of a finished campaign", { ...running, finishedAt: NOW }, "rolling_back", 1, false],
  ])("%s", (_what, campaign, state, batch, expected) => {
    expect(holdsNodeBusy(campaign, { state, batch })).toBe(expected);
  });
});

describe("awaitsRollback, read from the traits", () => {
  // Written out by hand on purpose: the final states a batch's rollback is sent to with the
  // state kept (a node that may run the target: timed out, failed, skipped, canceled). A node
  // that was rolling back ends rolled_back or rollback_failed and says its outcome by its state;
  // a succeeded node is either already current or confirmed in a batch that passed.
  const KEPT_STATE_ROLLBACK = new Set<NodeState>(["failed", "timed_out", "skipped", "canceled"]);
  it.each(NODE_STATES)("a node %s that was sent a rollback", (state) => {
    const n: CampaignNode = { ...nodeIn(state), rollbackOperationId: "c1/node-000/rollback" };
    expect(awaitsRollback(n)).toBe(KEPT_STATE_ROLLBACK.has(state));
    expect(awaitsRollback({ ...n, rollbackOperationId: undefined })).toBe(false);
  });
});
