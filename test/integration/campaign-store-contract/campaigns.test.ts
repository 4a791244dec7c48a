/**
 * The campaign store contract (see ./harness.ts), run against both adapters: transactions, and
 * the campaign rows a decision reads and writes (insertCampaign, readCampaign, readNodes,
 * writeDecision).
 */
import { describe, expect, it } from "vitest";
import {
  type CampaignNode,
  campaignFeatures,
  operationId,
} from "../../../control/campaign/index.js";
import { CampaignVersionConflict } from "../../../control/campaign-store/index.js";
import { at, campaignOf, op, T0, TARGET } from "./builders.js";
import { describeStoreContract } from "./harness.js";

describeStoreContract("campaigns", ({ fx, store, insert, addOperations, versionOf, unacked }) => {
  describe("transactions", () => {
    it("commits every write of a transaction and returns what its work returned", async () => {
      const c = await insert("c1", [{ id: "n1" }]);
      const result = await store.transaction(async (tx) => {
        const row = await tx.readCampaign("c1", true);
        await tx.writeDecision({
          campaignId: "c1",
          version: row?.version ?? 0,
          campaign: { ...c.campaign, phase: "paused", pausedAt: T0 + 5 },
          nodes: [],
          operations: [],
          appliedCommands: [],
          audits: [],
          now: at(5),
        });
        return "done";
      });
      expect(result).toBe("done");
      expect(await versionOf("c1")).toBe(2);
    });

    it("writes nothing when its work throws, and rethrows the error", async () => {
      const c = await insert("c1", [{ id: "n1" }]);
      const other = campaignOf("c2", [{ id: "n2" }], T0 + 1);
      await expect(
        store.transaction(async (tx) => {
          await tx.insertCampaign({
            campaign: other.campaign,
            nodes: other.nodes,
            createdBy: "tester",
            createdByIp: "127.0.0.1",
            now: at(1),
          });
          await tx.writeDecision({
            campaignId: "c1",
            version: 1,
            campaign: { ...c.campaign, phase: "paused", pausedAt: T0 + 5 },
            nodes: [{ ...(c.nodes[0] as CampaignNode), state: "offered" }],
            operations: [op("c1", "n1", "upgrade")],
            appliedCommands: [],
            audits: [],
            now: at(5),
          });
          throw new Error("boom");
        }),
      ).rejects.toThrow("boom");
      expect(await store.liveCampaignIds()).toEqual(["c1"]);
      const row = await store.transaction((tx) => tx.readCampaign("c1"));
      expect(row?.version).toBe(1);
      expect(row?.campaign.phase).toBe("running");
      expect((await store.transaction((tx) => tx.readNodes("c1")))[0]?.state).toBe("waiting");
      expect(await store.transaction((tx) => tx.readCampaign("c2"))).toBeUndefined();
      expect(await fx.operation(operationId("c1", "n1", "upgrade"))).toBeUndefined();
    });
  });

  describe("insertCampaign and readCampaign", () => {
    it("stores a campaign at version 1 with who created it and when", async () => {
      const c = await insert("c1", [{ id: "n1" }, { id: "n2" }], T0 + 7);
      const row = await store.transaction((tx) => tx.readCampaign("c1", true));
      expect(row).toEqual({
        campaign: c.campaign,
        targetVersion: TARGET,
        createdBy: "tester",
        updatedAt: at(7),
        finishedAt: undefined,
        version: 1,
        // The engine features it uses, recorded with it (engine-features.ts).
        features: campaignFeatures(c.campaign.spec),
      });
    });

    it("reads undefined for an unknown campaign", async () => {
      expect(await store.transaction((tx) => tx.readCampaign("nope"))).toBeUndefined();
    });

    it("refuses a second campaign with the same id and keeps the first", async () => {
      await insert("c1", [{ id: "n1" }]);
      await expect(insert("c1", [{ id: "n2" }], T0 + 1)).rejects.toThrow();
      expect((await store.transaction((tx) => tx.readNodes("c1"))).map((n) => n.nodeId)).toEqual([
        "n1",
      ]);
      expect(await store.liveCampaignIds()).toEqual(["c1"]);
    });
  });

  describe("readNodes", () => {
    it("reads every node record in canary order, whatever order they were inserted in", async () => {
      const ids = Array.from({ length: 12 }, (_, i) => `node-${i}`);
      const c = await insert(
        "c1",
        ids.map((id) => ({ id })),
      );
      const expected = [...c.nodes].sort((a, b) => a.order - b.order);
      // The plan's canary order is not the ids' order, nor the reversed insertion order.
      expect(expected.map((n) => n.nodeId)).not.toEqual([...ids].sort());
      const nodes = await store.transaction((tx) => tx.readNodes("c1"));
      expect(nodes).toEqual(expected);
      expect(nodes.map((n) => n.order)).toEqual(ids.map((_, i) => i));
    });

    it("reads no nodes for an unknown campaign", async () => {
      expect(await store.transaction((tx) => tx.readNodes("nope"))).toEqual([]);
    });
  });

  describe("writeDecision", () => {
    it("writes the campaign, changed nodes, outbox rows, applied commands and audits, and bumps the version", async () => {
      const c = await insert("c1", [{ id: "n1" }, { id: "n2" }]);
      const cmd = await fx.addCommand("c1", "pause", false);
      const n1 = c.nodes.find((n) => n.nodeId === "n1") as CampaignNode;
      const offered: CampaignNode = {
        ...n1,
        state: "offered",
        upgradeOperationId: operationId("c1", "n1", "upgrade"),
        offeredAt: T0 + 5,
        offerBootId: "b1",
        previousVersion: "1.0.0",
      };
      const wrote = await store.transaction(async (tx) => {
        const row = await tx.readCampaign("c1", true);
        expect(row?.version).toBe(1);
        return tx.writeDecision({
          campaignId: "c1",
          version: 1,
          campaign: { ...c.campaign, phase: "paused", pausedAt: T0 + 5 },
          nodes: [offered],
          operations: [op("c1", "n1", "upgrade")],
          appliedCommands: [{ id: cmd, outcome: "applied" }],
          audits: [
            {
              actor: "operator",
              actorIp: "10.0.0.1",
              action: "campaign.paused",
              campaignId: "c1",
              message: "paused by the operator",
              detail: { reason: "pause please" },
            },
          ],
          now: at(5),
        });
      });
      expect(wrote).toBe(true);
      const row = await store.transaction((tx) => tx.readCampaign("c1"));
      expect(row?.version).toBe(2);
      expect(row?.updatedAt).toEqual(at(5));
      expect(row?.campaign).toEqual({ ...c.campaign, phase: "paused", pausedAt: T0 + 5 });
      const nodes = await store.transaction((tx) => tx.readNodes("c1"));
      expect(nodes.find((n) => n.nodeId === "n1")).toEqual(offered);
      expect(nodes.find((n) => n.nodeId === "n2")?.state).toBe("waiting");
      // The upgrade is written, but not re-sent while its campaign is paused (resend-rules.ts):
      // it is once the campaign runs again.
      expect(await unacked()).toEqual([]);
      expect(await store.transaction((tx) => tx.pendingCommands("c1"))).toEqual([]);
      expect(await fx.command(cmd)).toEqual({ applied_at: at(5), outcome: "applied" });
      await store.transaction((tx) =>
        tx.writeDecision({
          campaignId: "c1",
          version: 2,
          campaign: c.campaign,
          nodes: [],
          operations: [],
          appliedCommands: [],
          audits: [],
          now: at(6),
        }),
      );
      expect(await unacked()).toEqual([
        {
          nodeId: "n1",
          id: "c1/n1/upgrade",
          payload: "payload of c1/n1/upgrade",
        },
      ]);
      expect(await fx.audits("c1")).toEqual([
        {
          action: "campaign.paused",
          actor: "operator",
          message: "paused by the operator",
          time: at(5),
        },
      ]);
    });

    it("bumps the version when only a command was applied, and sets finishedAt from a finished campaign", async () => {
      const c = await insert("c1", [{ id: "n1" }]);
      const cmd = await fx.addCommand("c1", "resume", false);
      await store.transaction((tx) =>
        tx.writeDecision({
          campaignId: "c1",
          version: 1,
          campaign: undefined,
          nodes: [],
          operations: [],
          appliedCommands: [{ id: cmd, outcome: "ignored: not paused" }],
          audits: [],
          now: at(3),
        }),
      );
      expect(await versionOf("c1")).toBe(2);
      expect(await fx.command(cmd)).toEqual({ applied_at: at(3), outcome: "ignored: not paused" });
      await store.transaction((tx) =>
        tx.writeDecision({
          campaignId: "c1",
          version: 2,
          campaign: { ...c.campaign, phase: "completed", finishedAt: T0 + 9 },
          nodes: [],
          operations: [],
          appliedCommands: [],
          audits: [],
          now: at(9),
        }),
      );
      const row = await store.transaction((tx) => tx.readCampaign("c1"));
      expect(row?.version).toBe(3);
      expect(row?.finishedAt).toEqual(at(9));
    });

    it("throws CampaignVersionConflict on a stale version, and its transaction writes nothing", async () => {
      const c = await insert("c1", [{ id: "n1" }]);
      const cmd = await fx.addCommand("c1", "pause", false);
      await addOperations("c1", [op("c1", "n1", "confirm")], at(1));
      expect(await versionOf("c1")).toBe(2);
      const stale = store.transaction((tx) =>
        tx.writeDecision({
          campaignId: "c1",
          version: 1,
          campaign: { ...c.campaign, phase: "paused", pausedAt: T0 + 2 },
          nodes: [{ ...(c.nodes[0] as CampaignNode), state: "offered" }],
          operations: [op("c1", "n1", "upgrade")],
          appliedCommands: [{ id: cmd, outcome: "applied" }],
          audits: [],
          now: at(2),
        }),
      );
      await expect(stale).rejects.toBeInstanceOf(CampaignVersionConflict);
      const row = await store.transaction((tx) => tx.readCampaign("c1"));
      expect(row?.version).toBe(2);
      expect(row?.campaign.phase).toBe("running");
      expect((await store.transaction((tx) => tx.readNodes("c1")))[0]?.state).toBe("waiting");
      expect(await fx.operation("c1/n1/upgrade")).toBeUndefined();
      expect((await store.transaction((tx) => tx.pendingCommands("c1"))).map((r) => r.id)).toEqual([
        cmd,
      ]);
    });

    it("throws CampaignVersionConflict for a campaign that does not exist", async () => {
      await expect(
        addOperations("ghost", [op("ghost", "n1", "confirm")], at(1)),
      ).rejects.toBeInstanceOf(CampaignVersionConflict);
    });

    it("inserts outbox rows insert-or-ignore: a row already there keeps its payload and time", async () => {
      await insert("c1", [{ id: "n1", state: "offered" }]);
      await addOperations("c1", [op("c1", "n1", "upgrade")], at(1));
      const again = await addOperations(
        "c1",
        [op("c1", "n1", "upgrade", { payload: new TextEncoder().encode("second payload") })],
        at(2),
      );
      expect(again).toBe(true);
      expect(await versionOf("c1")).toBe(3);
      expect(await unacked()).toEqual([
        { nodeId: "n1", id: "c1/n1/upgrade", payload: "payload of c1/n1/upgrade" },
      ]);
    });

    it("records an undeliverable outbox row as a send failure at the decision's time", async () => {
      await insert("c1", [{ id: "n1", state: "offered" }]);
      await addOperations(
        "c1",
        [op("c1", "n1", "upgrade", { payload: null, failure: "no artifact for the platform" })],
        at(4),
      );
      expect(await store.transaction((tx) => tx.readOperationFacts("c1"))).toEqual([
        {
          id: "c1/n1/upgrade",
          node_id: "n1",
          report_phase: null,
          report_code: null,
          report_message: null,
          report_version: null,
          report_at: null,
          report_boot_id: null,
          report_seq: null,
          failed_at: at(4),
          failure: "no artifact for the platform",
        },
      ]);
      expect(await unacked()).toEqual([]);
    });

    it("returns false and writes nothing when nothing changed, audits included, whatever the version", async () => {
      await insert("c1", [{ id: "n1" }]);
      for (const version of [1, 99]) {
        const wrote = await store.transaction((tx) =>
          tx.writeDecision({
            campaignId: "c1",
            version,
            campaign: undefined,
            nodes: [],
            operations: [],
            appliedCommands: [],
            audits: [
              {
                actor: "campaign-worker",
                actorIp: "",
                action: "campaign.noop",
                campaignId: "c1",
                message: "nothing",
              },
            ],
            now: at(5),
          }),
        );
        expect(wrote).toBe(false);
      }
      const row = await store.transaction((tx) => tx.readCampaign("c1"));
      expect(row?.version).toBe(1);
      expect(row?.updatedAt).toEqual(at(0));
      expect(await fx.audits("c1")).toEqual([]);
    });

    it("changes only the named nodes of the named campaign", async () => {
      const a = await insert("a", [{ id: "n1" }, { id: "n2" }]);
      await insert("b", [{ id: "n1" }]);
      const n1 = a.nodes.find((n) => n.nodeId === "n1") as CampaignNode;
      await store.transaction((tx) =>
        tx.writeDecision({
          campaignId: "a",
          version: 1,
          campaign: undefined,
          nodes: [
            { ...n1, state: "applying" },
            { ...n1, nodeId: "stranger", state: "applying" },
          ],
          operations: [],
          appliedCommands: [],
          audits: [],
          now: at(1),
        }),
      );
      const nodesOf = async (id: string) =>
        (await store.transaction((tx) => tx.readNodes(id))).map((n) => `${n.nodeId}:${n.state}`);
      expect((await nodesOf("a")).sort()).toEqual(["n1:applying", "n2:waiting"]);
      expect(await nodesOf("b")).toEqual(["n1:waiting"]);
      expect(await store.openNodeIds("b")).toEqual(["n1"]);
    });
  });
});
