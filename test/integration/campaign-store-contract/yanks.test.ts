/**
 * The campaign store contract (see ./harness.ts), run against both adapters: yanked releases.
 * A decision reads the yank of its target (readYanks), and an upgrade to a yanked release is
 * never re-sent from the outbox (a confirm or a rollback still is).
 */
import { beforeEach, describe, expect, it } from "vitest";
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
    it("never re-sends an upgrade to a yanked target; its confirms and rollbacks still go", async () => {
      await insert("c1", [
        { id: "n1", state: "offered" },
        { id: "n2", state: "applying" },
      ]);
      await addOperations(
        "c1",
        [op("c1", "n1", "upgrade"), op("c1", "n2", "upgrade"), op("c1", "n2", "rollback")],
        at(1),
      );
      expect(await unackedIds({})).toEqual(["c1/n1/upgrade", "c1/n2/rollback", "c1/n2/upgrade"]);
      await fx.yankRelease(TARGET, "bad", at(2), "alice");
      expect(await unackedIds({})).toEqual(["c1/n2/rollback"]);
    });
  });
});
