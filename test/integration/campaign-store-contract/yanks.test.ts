/**
 * The campaign store contract (see ./harness.ts), run against both adapters: yanked releases.
 * A decision reads the yank of its target (readYanks), and neither an upgrade to nor a confirm
 * of a yanked release is re-sent from the outbox (a rollback onto another release still is;
 * resend-rules.test.ts).
 */
import { beforeEach, describe, expect, it } from "vitest";
import type { CampaignNode } from "../../../control/campaign/index.js";
import { yankVersions } from "../../../control/campaign-worker/decision.js";
import { makeKeys, makeRelease } from "../../helpers/releases.js";
import { at, op, TARGET } from "./builders.js";
import { describeStoreContract } from "./harness.js";

describeStoreContract("yanks", ({ fx, store, insert, addOperations, unackedIds }) => {
  beforeEach(async () => {
    const keys = await makeKeys(1);
    for (const [version, sequence] of [
      [TARGET, 7],
      ["3.0.0", 8],
    ] as const) {
      const made = await makeRelease({ version, sequence, keys, platforms: ["linux-amd64"] });
      await fx.putRelease({
        version,
        sequence,
        envelope: made.envelope,
        artifacts: [{ platform: "linux-amd64", sha256: "ab".repeat(32), size: 42, url: "" }],
        expiresAt: at(7 * 24 * 3_600_000).getTime(),
      });
    }
  });

  describe("readYanks", () => {
    it("answers the yanked ones among the versions asked, with when, by whom and why", async () => {
      await fx.yankRelease(TARGET, "corrupts the cache", at(5), "alice");
      const yanks = await store.transaction((tx) => tx.readYanks([TARGET, "3.0.0", "9.9.9"]));
      expect([...yanks.entries()]).toEqual([
        [
          TARGET,
          { version: TARGET, at: at(5).getTime(), by: "alice", reason: "corrupts the cache" },
        ],
      ]);
    });

    it("keeps the first yank, and answers an empty map for none or no versions", async () => {
      expect((await store.transaction((tx) => tx.readYanks([TARGET]))).size).toBe(0);
      expect((await store.transaction((tx) => tx.readYanks([]))).size).toBe(0);
      await fx.yankRelease(TARGET, "first", at(5), "alice");
      await fx.yankRelease(TARGET, "second", at(9), "bob");
      const yank = (await store.transaction((tx) => tx.readYanks([TARGET]))).get(TARGET);
      expect(yank).toEqual({ version: TARGET, at: at(5).getTime(), by: "alice", reason: "first" });
    });
  });

  describe("unackedOperations", () => {
    it("never re-sends an upgrade to or a confirm of a yanked target; its rollbacks still go", async () => {
      await insert("c1", [
        { id: "n1", state: "offered" },
        { id: "n2", state: "applying" },
        { id: "n3", state: "succeeded" },
      ]);
      await addOperations(
        "c1",
        [
          op("c1", "n1", "upgrade"),
          op("c1", "n2", "upgrade"),
          op("c1", "n2", "rollback"),
          op("c1", "n3", "confirm"),
        ],
        at(1),
      );
      expect(await unackedIds({})).toEqual([
        "c1/n1/upgrade",
        "c1/n2/rollback",
        "c1/n2/upgrade",
        "c1/n3/confirm",
      ]);
      await fx.yankRelease(TARGET, "bad", at(2), "alice");
      expect(await unackedIds({})).toEqual(["c1/n2/rollback"]);
    });
  });
  describe("a rollback withheld from a yanked previous release", () => {
    it("reads the yanks of the nodes' previous versions with the target's, and keeps the withheld nodes as written", async () => {
      const keys = await makeKeys(1);
      const made = await makeRelease({
        version: "1.0.0",
        sequence: 5,
        keys,
        platforms: ["linux-amd64"],
      });
      await fx.putRelease({
        version: "1.0.0",
        sequence: 5,
        envelope: made.envelope,
        artifacts: [{ platform: "linux-amd64", sha256: "cd".repeat(32), size: 42, url: "" }],
        expiresAt: at(7 * 24 * 3_600_000).getTime(),
      });
      const c = await insert("c1", [{ id: "n1" }, { id: "n2" }]);
      const [n1, n2] = c.nodes as [CampaignNode, CampaignNode];
      await store.transaction((tx) =>
        tx.writeDecision({
          campaignId: "c1",
          version: 1,
          campaign: { ...c.campaign, phase: "rolling_back", rollbackCause: "breach" },
          nodes: [
            {
              ...n1,
              state: "failed",
              code: "rollback_withheld",
              message:
                "rollback withheld: its previous release 1.0.0 was yanked (bad); it stays on the target",
              previousVersion: "1.0.0",
              rollbackResult: "rollback_withheld",
            },
            {
              ...n2,
              state: "failed",
              code: "config_apply_failed",
              previousVersion: "1.0.0",
              rollbackResult: "rollback_withheld",
            },
          ],
          operations: [],
          appliedCommands: [],
          audits: [],
          now: at(3),
        }),
      );
      await fx.yankRelease("1.0.0", "bad", at(4), "alice");
      const nodes = await store.transaction((tx) => tx.readNodes("c1"));
      expect(yankVersions(TARGET, nodes).sort()).toEqual(["1.0.0", TARGET]);
      const yanks = await store.transaction((tx) => tx.readYanks(yankVersions(TARGET, nodes)));
      expect([...yanks.keys()]).toEqual(["1.0.0"]);
      expect(nodes.map((n) => [n.nodeId, n.state, n.code, n.rollbackResult])).toEqual([
        ["n1", "failed", "rollback_withheld", "rollback_withheld"],
        ["n2", "failed", "config_apply_failed", "rollback_withheld"],
      ]);
    });
  });
});
