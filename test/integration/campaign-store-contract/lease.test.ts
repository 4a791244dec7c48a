/**
 * The campaign store contract (see ./harness.ts), run against both adapters: the leader lease.
 * Takeovers follow the end of the holder's session, not its TTL; every lease a test takes is
 * released after it.
 */
import { afterEach, describe, expect, it } from "vitest";
import { type LeaderLease, StaleLeaderError } from "../../../control/campaign-store/index.js";
import { at, op } from "./builders.js";
import { describeStoreContract } from "./harness.js";

/** The TTL of every lease the tests take (never reached: takeovers follow a session's end). */
const TTL_MS = 60_000;

describeStoreContract("lease", ({ fx, store, insert, versionOf, unackedIds }) => {
  const leases: LeaderLease[] = [];
  afterEach(async () => {
    for (const lease of leases.splice(0)) await lease.release();
  });

  const lease = (holder: string, onLost?: (why: string) => void) => {
    const l = store.lease({ holder, ttlMs: TTL_MS, ...(onLost ? { onLost } : {}) });
    leases.push(l);
    return l;
  };

  describe("the leader lease", () => {
    const holds = (holder: string, epoch: number, name = "campaign-worker") =>
      store.transaction((tx) => tx.holdsLease(name, holder, epoch));

    it("is acquired at epoch 1 by the first tick and renewed by the next", async () => {
      const a = lease("A");
      expect(a.epoch).toBeUndefined();
      expect(await holds("A", 1)).toBe(false);
      expect(await a.tick()).toBe(true);
      expect(a.epoch).toBe(1);
      expect(await a.tick()).toBe(true);
      expect(a.epoch).toBe(1);
      await store.transaction((tx) => a.fence(tx));
    });

    it("cannot be taken by a second holder while the first holds it live", async () => {
      const a = lease("A");
      const b = lease("B");
      await a.tick();
      expect(await b.tick()).toBe(false);
      expect(b.epoch).toBeUndefined();
      await expect(store.transaction((tx) => b.fence(tx))).rejects.toBeInstanceOf(StaleLeaderError);
      expect(await a.tick()).toBe(true);
      expect(a.epoch).toBe(1);
    });

    it("holdsLease is true only for the current holder at its epoch, under the lease's name", async () => {
      const a = lease("A");
      await a.tick();
      expect(await holds("A", 1)).toBe(true);
      expect(await holds("A", 2)).toBe(false);
      expect(await holds("B", 1)).toBe(false);
      expect(await holds("A", 1, "another-lease")).toBe(false);
    });

    it("is taken over at epoch 2 once the holder's session ended; the old holder's fence throws and its next tick answers false", async () => {
      const lost: string[] = [];
      const a = lease("A", (why) => lost.push(why));
      const b = lease("B");
      await a.tick();
      await fx.endSession("A");
      expect(await b.tick()).toBe(true);
      expect(b.epoch).toBe(2);
      expect(await holds("B", 2)).toBe(true);
      expect(await holds("A", 1)).toBe(false);
      await expect(store.transaction((tx) => a.fence(tx))).rejects.toBeInstanceOf(StaleLeaderError);
      expect(a.epoch).toBeUndefined();
      expect(lost).toHaveLength(1);
      expect(await a.tick()).toBe(false);
      expect(a.epoch).toBeUndefined();
      await expect(store.transaction((tx) => a.fence(tx))).rejects.toBeInstanceOf(StaleLeaderError);
      await store.transaction((tx) => b.fence(tx));
    });

    it("ends the leadership of a holder whose session ended at its next tick, and the holder then takes it back at the next epoch", async () => {
      const lost: string[] = [];
      const a = lease("A", (why) => lost.push(why));
      await a.tick();
      await fx.endSession("A");
      expect(await a.tick()).toBe(false);
      expect(a.epoch).toBeUndefined();
      expect(lost).toHaveLength(1);
      expect(await a.tick()).toBe(true);
      expect(a.epoch).toBe(2);
    });

    it("makes a takeover wait for a transaction fenced at the old epoch, whose writes commit", async () => {
      await insert("c1", [{ id: "n1" }]);
      const a = lease("A");
      const b = lease("B");
      await a.tick();
      await fx.endSession("A");
      let taken: boolean | undefined;
      let taking: Promise<boolean> = Promise.resolve(false);
      await store.transaction(async (tx) => {
        await a.fence(tx);
        taking = b.tick().then((v) => {
          taken = v;
          return v;
        });
        await fx.untilLeaseWaits();
        expect(taken).toBeUndefined();
        const row = await tx.readCampaign("c1", true);
        await tx.writeDecision({
          campaignId: "c1",
          version: row?.version ?? 0,
          campaign: undefined,
          nodes: [],
          operations: [op("c1", "n1", "confirm")],
          appliedCommands: [],
          audits: [],
          now: at(1),
        });
      });
      expect(await taking).toBe(true);
      expect(b.epoch).toBe(2);
      expect(await versionOf("c1")).toBe(2);
      expect(await unackedIds()).toEqual(["c1/n1/confirm"]);
    });

    it("release() lets another holder take it at once and is idempotent", async () => {
      const a = lease("A");
      const b = lease("B");
      await a.tick();
      await a.release();
      expect(a.epoch).toBeUndefined();
      await a.release();
      expect(await b.tick()).toBe(true);
      expect(b.epoch).toBe(2);
      await expect(store.transaction((tx) => a.fence(tx))).rejects.toBeInstanceOf(StaleLeaderError);
      expect(await a.tick()).toBe(false);
      expect(await holds("B", 2)).toBe(true);
    });
  });
});
