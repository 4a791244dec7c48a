/**
 * The campaign store contract (see ./harness.ts), run against both adapters: what is polled
 * outside a decision: the outbox rows to (re-)send and their send stamps, the live campaigns,
 * their open nodes, and the live campaign of each node.
 */
import { describe, expect, it } from "vitest";
import { NODE_STATES } from "../../../control/campaign/index.js";
import { at, op, T0, TARGET } from "./builders.js";
import { describeStoreContract } from "./harness.js";

describeStoreContract("outbox", ({ fx, store, insert, addOperations, unacked, unackedIds }) => {
  describe("unackedOperations and markSent", () => {
    it("re-sends a confirm and a rollback whatever the node's state, an upgrade only while offered/applying/restarting", async () => {
      const nodes = NODE_STATES.map((state) => ({ id: `n-${state}`, state }));
      await insert("c1", nodes);
      await addOperations(
        "c1",
        nodes.flatMap((n) => [
          op("c1", n.id, "upgrade"),
          op("c1", n.id, "rollback"),
          op("c1", n.id, "confirm"),
        ]),
        at(1),
      );
      const sent = (await unacked()).map((o) => `${o.id.split("/")[2]}@${o.nodeId.slice(2)}`);
      expect(sent.sort()).toEqual(
        [
          ...NODE_STATES.map((s) => `confirm@${s}`),
          "upgrade@offered",
          "upgrade@applying",
          "upgrade@restarting",
          ...NODE_STATES.map((s) => `rollback@${s}`),
        ].sort(),
      );
    });

    it("stops re-sending a rollback once its node belongs to a campaign created later", async () => {
      await insert("c1", [
        { id: "n1", state: "failed" },
        { id: "n2", state: "timed_out" },
      ]);
      await addOperations("c1", [op("c1", "n1", "rollback"), op("c1", "n2", "rollback")], at(1));
      await insert("c2", [{ id: "n1" }], T0 + 5);
      expect(await unackedIds({})).toEqual(["c1/n2/rollback"]);
    });

    it("lists them oldest first, ties by id, with their payloads", async () => {
      await insert("c1", [{ id: "a" }, { id: "b" }, { id: "c" }]);
      await addOperations("c1", [op("c1", "c", "confirm"), op("c1", "b", "confirm")], at(2));
      await addOperations("c1", [op("c1", "a", "confirm")], at(3));
      await insert("c0", [{ id: "z" }], T0 + 1);
      await addOperations("c0", [op("c0", "z", "confirm")], at(1));
      expect(await unacked()).toEqual([
        { nodeId: "z", id: "c0/z/confirm", payload: "payload of c0/z/confirm" },
        { nodeId: "b", id: "c1/b/confirm", payload: "payload of c1/b/confirm" },
        { nodeId: "c", id: "c1/c/confirm", payload: "payload of c1/c/confirm" },
        { nodeId: "a", id: "c1/a/confirm", payload: "payload of c1/a/confirm" },
      ]);
    });

    it("filters by node and by last send", async () => {
      await insert("c1", [
        { id: "n1", state: "offered" },
        { id: "n2", state: "offered" },
        { id: "n3", state: "offered" },
      ]);
      await addOperations(
        "c1",
        [op("c1", "n1", "upgrade"), op("c1", "n2", "upgrade"), op("c1", "n3", "upgrade")],
        at(1),
      );
      await store.markSent(["c1/n1/upgrade"], at(10));
      await store.markSent(["c1/n2/upgrade"], at(20));
      expect(await unackedIds({ nodeIds: ["n2", "ghost"] })).toEqual(["c1/n2/upgrade"]);
      expect(await unackedIds({ nodeIds: [] })).toEqual([]);
      expect(await unackedIds({ sentBefore: at(20) })).toEqual(["c1/n1/upgrade", "c1/n3/upgrade"]);
      expect(await unackedIds({ sentBefore: at(10) })).toEqual(["c1/n3/upgrade"]);
      expect(await unackedIds({ sentBefore: at(21) })).toEqual([
        "c1/n1/upgrade",
        "c1/n2/upgrade",
        "c1/n3/upgrade",
      ]);
      expect(await unackedIds({ nodeIds: ["n1", "n2"], sentBefore: at(20) })).toEqual([
        "c1/n1/upgrade",
      ]);
    });

    it("never re-sends an acknowledged, failed or payload-less row", async () => {
      await insert("c1", [{ id: "n1" }, { id: "n2" }, { id: "n3" }, { id: "n4" }]);
      await addOperations(
        "c1",
        [
          op("c1", "n1", "confirm"),
          op("c1", "n2", "confirm", { payload: null, failure: "cannot build" }),
          op("c1", "n3", "confirm", { payload: null }),
          op("c1", "n4", "confirm"),
        ],
        at(1),
      );
      await store.recordFacts(
        [
          {
            id: "c1/n1/confirm",
            nodeId: "n1",
            phase: "CONFIRMED",
            code: "",
            message: "",
            version: TARGET,
            at: at(5),
            bootId: null,
          },
        ],
        [],
      );
      expect(await unackedIds()).toEqual(["c1/n4/confirm"]);
    });

    it("markSent stamps the last send and counts sends, ignoring unknown ids", async () => {
      await insert("c1", [{ id: "n1" }, { id: "n2" }]);
      await addOperations("c1", [op("c1", "n1", "confirm"), op("c1", "n2", "confirm")], at(1));
      await store.markSent(["c1/n1/confirm", "ghost"], at(10));
      await store.markSent(["c1/n1/confirm"], at(20));
      await store.markSent([], at(30));
      expect(await fx.operation("c1/n1/confirm")).toEqual({
        acked_at: null,
        last_sent_at: at(20),
        send_count: 2,
      });
      expect(await fx.operation("c1/n2/confirm")).toEqual({
        acked_at: null,
        last_sent_at: null,
        send_count: 0,
      });
      expect(await fx.operation("ghost")).toBeUndefined();
    });
  });

  describe("liveCampaignIds and openNodeIds", () => {
    it("lists the campaigns not finished, oldest first, ties by id", async () => {
      await insert("b", [{ id: "n1" }], T0 + 1);
      await insert("a", [{ id: "n1" }], T0 + 2);
      const d = await insert("d", [{ id: "n1" }], T0);
      await insert("c", [{ id: "n1" }], T0 + 1);
      await store.transaction((tx) =>
        tx.writeDecision({
          campaignId: "d",
          version: 1,
          campaign: { ...d.campaign, phase: "completed", finishedAt: T0 + 3 },
          nodes: [],
          operations: [],
          appliedCommands: [],
          audits: [],
          now: at(3),
        }),
      );
      expect(await store.liveCampaignIds()).toEqual(["b", "c", "a"]);
    });

    it("lists the nodes of a campaign not in a final state", async () => {
      await insert(
        "c1",
        NODE_STATES.map((state) => ({ id: `n-${state}`, state })),
      );
      expect((await store.openNodeIds("c1")).sort()).toEqual([
        "n-applying",
        "n-offered",
        "n-restarting",
        "n-rolling_back",
        "n-verifying",
        "n-waiting",
      ]);
      expect(await store.openNodeIds("nope")).toEqual([]);
    });
  });

  describe("liveCampaignOfNodes", () => {
    it("names the newest unfinished campaign of each node, leaving out nodes in none", async () => {
      await insert("old", [{ id: "n1" }, { id: "n2" }], T0);
      await insert("new", [{ id: "n2" }, { id: "n3", state: "succeeded" }], T0 + 1);
      const done = await insert("done", [{ id: "n4" }, { id: "n1" }], T0 + 2);
      await store.transaction((tx) =>
        tx.writeDecision({
          campaignId: "done",
          version: 1,
          campaign: { ...done.campaign, phase: "completed", finishedAt: T0 + 3 },
          nodes: [],
          operations: [],
          appliedCommands: [],
          audits: [],
          now: at(3),
        }),
      );
      const found = await store.liveCampaignOfNodes(["n1", "n2", "n3", "n4", "ghost", "n1"]);
      expect([...found].sort()).toEqual([
        ["n1", "old"],
        ["n2", "new"],
        ["n3", "new"],
      ]);
      expect(await store.liveCampaignOfNodes([])).toEqual(new Map());
    });
  });
});
