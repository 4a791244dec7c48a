/**
 * The campaign store contract (see ./harness.ts), run against both adapters: late rollbacks
 * (control/campaign/late-rollback.ts). A finished campaign's unacknowledged rollback is delivered
 * only once its node's latest Hello is on the campaign's target and only while the node's pool
 * has room under its disruption budget; once delivered it holds a slot of that budget
 * (`poolLoads`) until its agent reports on it, says Hello on its previous release, or one
 * reconnect timeout has passed, so no other campaign offers over it. Known defect 34 (PD1, seed
 * 175): such a rollback restarted its agent outside every budget.
 */
import { beforeEach, describe, expect, it } from "vitest";
import {
  type CampaignNode,
  CONTROL_CLOCK_DISAGREEMENT_MS,
  type NodeState,
} from "../../../control/campaign/index.js";
import { at, op, T0, TARGET } from "./builders.js";
import type { RegistryInput } from "./fixture.js";
import { describeStoreContract } from "./harness.js";

const PREVIOUS = "1.0.0";
/** The reconnect timeout of every campaign of the builders. */
const TIMEOUT = 3_600_000;
/**
 * How long a late rollback's slot holds without a report: one reconnect timeout and the margin
 * for Controls whose clocks disagree (the stamp and the reader may be two Controls).
 */
const SLOT = TIMEOUT + CONTROL_CLOCK_DISAGREEMENT_MS;
/** When the late rollbacks are read (after every campaign below finished). */
const NOW = T0 + 100_000;

describeStoreContract("late rollbacks", ({ fx, store, insert, unackedIds }) => {
  const registryRow = (id: string): RegistryInput => ({
    id,
    pool: "p",
    boot_id: "b",
    agent_version: PREVIOUS,
    capabilities: ["upgrade.v1"],
    platform: "linux-amd64",
    enabled: true,
    last_seen: null,
  });

  beforeEach(async () => {
    // Pool "p" of 10 enabled nodes: a budget of 1 at the builders' 5 %.
    for (let i = 0; i < 10; i++) await fx.putNode(registryRow(`n${i}`));
  });

  /**
   * Campaign `id` (created at `createdAt`) whose batch rolled back and which finished `failed`,
   * its node `nodeId` final in `state` with an unacknowledged rollback in the outbox.
   */
  async function finishedWithRollback(
    id: string,
    nodeId: string,
    createdAt: number,
    state: NodeState = "failed",
  ) {
    const c = await insert(id, [{ id: nodeId, pool: "p" }], createdAt);
    const node = c.nodes[0] as CampaignNode;
    await store.transaction((tx) =>
      tx.writeDecision({
        campaignId: id,
        version: 1,
        campaign: {
          ...c.campaign,
          phase: "failed",
          code: "rollback_unconfirmed",
          rollbackCause: "breach",
          finishedAt: createdAt + 10,
        },
        nodes: [
          {
            ...node,
            state,
            code: "reconnect_timeout",
            previousVersion: PREVIOUS,
            upgradeOperationId: `${id}/${nodeId}/upgrade`,
            rollbackOperationId: `${id}/${nodeId}/rollback`,
            rollbackResult: "rollback_unconfirmed",
          },
        ],
        operations: [op(id, nodeId, "rollback")],
        appliedCommands: [],
        audits: [],
        now: new Date(createdAt + 10),
      }),
    );
  }

  const load = async (now = NOW) =>
    (await store.transaction((tx) => tx.poolLoads(["p"], "another", now))).get("p");
  const deliver = (nodeIds: readonly string[], now = NOW) =>
    unackedIds({ nodeIds, now: new Date(now) });
  const reportOn = (nodeId: string, id: string, phase: string, when: number) =>
    store.recordFacts(
      [
        {
          id,
          nodeId,
          phase,
          code: "",
          message: phase.toLowerCase(),
          version: PREVIOUS,
          at: new Date(when),
          bootId: null,
        },
      ],
      [],
    );

  describe("a finished campaign's unacknowledged rollback", () => {
    it("is not sent while its node's latest Hello is not on the campaign's target", async () => {
      await finishedWithRollback("old", "n1", T0);
      expect(await deliver(["n1"])).toEqual([]);
      expect(await load()).toEqual({ size: 10, inFlightElsewhere: 0 });
    });

    it("is sent once its node says Hello on the target, and then holds a slot of its pool", async () => {
      await finishedWithRollback("old", "n1", T0);
      await fx.helloOn("n1", TARGET);
      expect(await deliver(["n1"])).toEqual(["old/n1/rollback"]);
      expect(await load(NOW + 1)).toEqual({ size: 10, inFlightElsewhere: 1 });
    });

    it("is not sent while its pool is at its budget, and is once a slot frees", async () => {
      await finishedWithRollback("old", "n1", T0);
      await fx.helloOn("n1", TARGET);
      const live = await insert("live", [{ id: "n2", pool: "p", state: "offered" }], T0 + 50);
      expect(await deliver(["n1"])).toEqual([]);
      expect(await load()).toEqual({ size: 10, inFlightElsewhere: 1 });
      await store.transaction((tx) =>
        tx.writeDecision({
          campaignId: "live",
          version: 1,
          campaign: undefined,
          nodes: live.nodes.map((n) => ({ ...n, state: "succeeded" as const })),
          operations: [],
          appliedCommands: [],
          audits: [],
          now: at(60),
        }),
      );
      expect(await deliver(["n1"])).toEqual(["old/n1/rollback"]);
    });

    it("never shares its pool's last slot with another late rollback", async () => {
      await finishedWithRollback("old", "n1", T0);
      await finishedWithRollback("older", "n3", T0 - 1000);
      await fx.helloOn("n1", TARGET);
      await fx.helloOn("n3", TARGET);
      expect(await deliver(["n1", "n3"])).toEqual(["older/n3/rollback"]);
      // Re-sent in its own slot; the other still waits.
      expect(await deliver(["n1", "n3"], NOW + 1000)).toEqual(["older/n3/rollback"]);
      expect(await load(NOW + 1000)).toEqual({ size: 10, inFlightElsewhere: 1 });
    });

    it("holds its slot until its agent reports on it", async () => {
      await finishedWithRollback("old", "n1", T0);
      await fx.helloOn("n1", TARGET);
      await deliver(["n1"]);
      await reportOn("n1", "old/n1/rollback", "RESTARTING", NOW + 1000);
      expect(await load(NOW + 2000)).toEqual({ size: 10, inFlightElsewhere: 1 });
      await reportOn("n1", "old/n1/rollback", "REINSTATED", NOW + 3000);
      expect(await load(NOW + 4000)).toEqual({ size: 10, inFlightElsewhere: 0 });
    });

    it("holds its slot until its node says Hello on its previous release", async () => {
      await finishedWithRollback("old", "n1", T0);
      await fx.helloOn("n1", TARGET);
      await deliver(["n1"]);
      await fx.helloOn("n1", PREVIOUS);
      expect(await load(NOW + 1)).toEqual({ size: 10, inFlightElsewhere: 0 });
    });

    it("holds its slot one reconnect timeout (and the clocks' margin) after the later of its admission and its agent's latest report, no longer; a re-send in it does not extend it", async () => {
      await finishedWithRollback("old", "n1", T0);
      await fx.helloOn("n1", TARGET);
      await deliver(["n1"]);
      // The agent says nothing: re-sent, in the slot it holds.
      expect(await deliver(["n1"], NOW + 60_000)).toEqual(["old/n1/rollback"]);
      expect(await load(NOW + SLOT - 1)).toEqual({ size: 10, inFlightElsewhere: 1 });
      expect(await load(NOW + SLOT)).toEqual({ size: 10, inFlightElsewhere: 0 });
      await reportOn("n1", "old/n1/rollback", "RESTARTING", NOW + 5000);
      expect(await load(NOW + SLOT + 4999)).toEqual({ size: 10, inFlightElsewhere: 1 });
      expect(await load(NOW + SLOT + 5000)).toEqual({ size: 10, inFlightElsewhere: 0 });
    });

    it("once its slot ended, is sent again only when admitted again under the budget", async () => {
      await finishedWithRollback("old", "n1", T0);
      await fx.helloOn("n1", TARGET);
      await deliver(["n1"]);
      await insert("live", [{ id: "n2", pool: "p", state: "offered" }], T0 + 50);
      // Its slot counts until it ends; then the live campaign's offer fills the pool.
      expect(await deliver(["n1"], NOW + 1000)).toEqual(["old/n1/rollback"]);
      expect(await deliver(["n1"], NOW + SLOT)).toEqual([]);
      expect(await load(NOW + SLOT)).toEqual({ size: 10, inFlightElsewhere: 1 });
    });

    it("is not sent to a node of a campaign created later, on the target or not", async () => {
      await finishedWithRollback("old", "n1", T0);
      await fx.helloOn("n1", TARGET);
      await insert("newer", [{ id: "n1", pool: "p", state: "succeeded" }], T0 + 50);
      expect(await deliver(["n1"])).toEqual([]);
    });

    it("is sent only to the nodes named (the ones connected to the Control reading)", async () => {
      await finishedWithRollback("old", "n1", T0);
      await fx.helloOn("n1", TARGET);
      expect(await unackedIds({ now: new Date(NOW) })).toEqual([]);
      expect(await load()).toEqual({ size: 10, inFlightElsewhere: 0 });
    });
  });
});
