/**
 * The campaign store contract (see ./harness.ts), run against both adapters: what an offer
 * reads: the load of the nodes' pools (poolLoads) and the release offered (offerRelease).
 */
import { beforeEach, describe, expect, it } from "vitest";
import { type CampaignNode, operationId } from "../../../control/campaign/index.js";
import { parseEnvelope } from "../../../control/shared/release/index.js";
import { makeKeys, makeRelease } from "../../helpers/releases.js";
import { at, T0, TARGET } from "./builders.js";
import type { RegistryInput } from "./fixture.js";
import { describeStoreContract } from "./harness.js";

describeStoreContract("offers", ({ fx, store, insert }) => {
  describe("poolLoads", () => {
    const NOW = T0 + 100_000;
    const registryRow = (id: string, pool: string, enabled = true): RegistryInput => ({
      id,
      pool,
      boot_id: "b",
      agent_version: "1.0.0",
      capabilities: ["upgrade.v1"],
      platform: "linux-amd64",
      enabled,
      last_seen: null,
    });

    beforeEach(async () => {
      for (const id of ["a1", "a2", "a3"]) await fx.putNode(registryRow(id, "p1"));
      await fx.putNode(registryRow("a4", "p1", false));
      for (const id of ["b1", "b2"]) await fx.putNode(registryRow(id, "p2"));
      for (const id of ["z1", "z2", "z3"]) await fx.putNode(registryRow(id, "p9"));
      await insert("mine", [
        { id: "m1", pool: "p1", state: "offered" },
        { id: "m2", pool: "p1", state: "applying" },
        { id: "m3", pool: "p2", state: "waiting" },
      ]);
      await insert(
        "other",
        [
          { id: "o-offered", pool: "p1", state: "offered" },
          { id: "o-applying", pool: "p1", state: "applying" },
          { id: "o-restarting", pool: "p1", state: "restarting" },
          { id: "o-verifying-grace", pool: "p1", state: "verifying", graceEndsAt: NOW + 1 },
          { id: "o-verifying-open", pool: "p1", state: "verifying" },
          { id: "o-verifying-ended", pool: "p1", state: "verifying", graceEndsAt: NOW },
          { id: "o-verifying-past", pool: "p1", state: "verifying", graceEndsAt: NOW - 5 },
          { id: "o-waiting", pool: "p1", state: "waiting" },
          { id: "o-rolling-back", pool: "p1", state: "rolling_back" },
          { id: "o-succeeded", pool: "p1", state: "succeeded" },
          { id: "o-failed", pool: "p1", state: "failed" },
          { id: "o-p2", pool: "p2", state: "restarting" },
          { id: "o-p9", pool: "p9", state: "offered" },
        ],
        T0 + 1,
      );
      const done = await insert(
        "done",
        [
          { id: "d1", pool: "p1", state: "applying" },
          { id: "d2", pool: "p2", state: "offered" },
        ],
        T0 + 2,
      );
      await store.transaction((tx) =>
        tx.writeDecision({
          campaignId: "done",
          version: 1,
          campaign: { ...done.campaign, phase: "aborted", finishedAt: T0 + 3 },
          nodes: [],
          operations: [],
          appliedCommands: [],
          audits: [],
          now: at(3),
        }),
      );
    });

    const loads = async (pools: readonly string[], excluding: string) =>
      Object.fromEntries(
        await store.transaction((tx) => tx.poolLoads(pools, excluding, NOW)),
      ) as Record<string, unknown>;

    it("sizes a pool by its enabled nodes in the registry, for the asked pools only", async () => {
      const got = await loads(["p1", "p2", "p3"], "mine");
      expect(Object.keys(got).sort()).toEqual(["p1", "p2", "p3"]);
      expect(got.p1).toMatchObject({ size: 3 });
      expect(got.p2).toMatchObject({ size: 2 });
      expect(got.p3).toEqual({ size: 0, inFlightElsewhere: 0 });
    });

    it("counts in flight elsewhere: offered, applying, restarting, rolling back, and verifying within grace, of other unfinished campaigns only", async () => {
      expect(await loads(["p1", "p2", "p3"], "mine")).toEqual({
        p1: { size: 3, inFlightElsewhere: 6 },
        p2: { size: 2, inFlightElsewhere: 1 },
        p3: { size: 0, inFlightElsewhere: 0 },
      });
      expect(await loads(["p1", "p2"], "other")).toEqual({
        p1: { size: 3, inFlightElsewhere: 2 },
        p2: { size: 2, inFlightElsewhere: 0 },
      });
    });

    it("counts a node rolling back in another unfinished campaign against its pool: it restarts onto its previous release", async () => {
      await insert(
        "breached",
        Array.from({ length: 6 }, (_, i) => ({ id: `rb${i}`, pool: "p9", state: "rolling_back" })),
        T0 + 4,
      );
      expect(await loads(["p9"], "mine")).toEqual({ p9: { size: 3, inFlightElsewhere: 7 } });
    });

    it("counts a final node sent its campaign's rollback until the rollback's outcome is recorded, its deadline passed or not: it restarts onto its previous release", async () => {
      const c = await insert(
        "breached",
        [
          { id: "f-pending", pool: "p9", state: "failed" },
          { id: "t-pending", pool: "p9", state: "timed_out" },
          { id: "s-pending", pool: "p9", state: "skipped" },
          { id: "x-pending", pool: "p9", state: "canceled" },
          { id: "f-no-deadline", pool: "p9", state: "failed" },
          { id: "f-deadline-now", pool: "p9", state: "failed" },
          { id: "f-deadline-past", pool: "p9", state: "failed" },
          { id: "f-back", pool: "p9", state: "failed" },
          { id: "f-unconfirmed", pool: "p9", state: "timed_out" },
          { id: "f-withheld", pool: "p9", state: "failed" },
          { id: "f-never-sent", pool: "p9", state: "failed" },
          { id: "s-never-sent", pool: "p9", state: "succeeded" },
          { id: "rb-rolled-back", pool: "p9", state: "rolled_back" },
          { id: "rb-rollback-failed", pool: "p9", state: "rollback_failed" },
        ],
        T0 + 4,
      );
      const sent = (deadline: number | undefined) => ({
        rollbackAt: T0 + 5,
        rollbackDeadline: deadline,
      });
      const patch: Record<string, Partial<CampaignNode>> = {
        "f-pending": sent(NOW + 1),
        "t-pending": sent(NOW + 1),
        "s-pending": sent(NOW + 1),
        "x-pending": sent(NOW + 1),
        "f-no-deadline": sent(undefined),
        "f-deadline-now": sent(NOW),
        "f-deadline-past": sent(NOW - 5),
        "f-back": { ...sent(NOW + 1), rollbackResult: "rolled_back" },
        "f-unconfirmed": { ...sent(NOW + 1), rollbackResult: "rollback_unconfirmed" },
        "f-withheld": { rollbackResult: "rollback_withheld" },
        "rb-rolled-back": sent(NOW + 1),
        "rb-rollback-failed": sent(NOW + 1),
      };
      const nodes = c.nodes.flatMap((n) => {
        const p = patch[n.nodeId];
        if (p === undefined) return [];
        const withOp =
          p.rollbackAt === undefined
            ? {}
            : { rollbackOperationId: operationId("breached", n.nodeId, "rollback") };
        return [{ ...n, ...withOp, ...p }];
      });
      await store.transaction((tx) =>
        tx.writeDecision({
          campaignId: "breached",
          version: 1,
          campaign: undefined,
          nodes,
          operations: [],
          appliedCommands: [],
          audits: [],
          now: at(5),
        }),
      );
      // 1 offered of "other" plus f-, t-, s-, x-pending, f-no-deadline and f-deadline-now/past
      // (a Control that took over judges the rollback later than its recorded deadline).
      expect(await loads(["p9"], "mine")).toEqual({ p9: { size: 3, inFlightElsewhere: 8 } });
      // Its own campaign's nodes are never "elsewhere".
      expect(await loads(["p9"], "breached")).toEqual({ p9: { size: 3, inFlightElsewhere: 1 } });
    });

    it("answers an empty map for no pools", async () => {
      expect((await store.transaction((tx) => tx.poolLoads([], "mine", NOW))).size).toBe(0);
    });
  });

  describe("offerRelease", () => {
    it("reads a registered release with its envelope and expiry, and undefined for an unknown version", async () => {
      const made = await makeRelease({
        version: TARGET,
        sequence: 7,
        keys: await makeKeys(1),
        platforms: ["linux-amd64"],
      });
      const artifacts = [{ platform: "linux-amd64", sha256: "ab".repeat(32), size: 42, url: "" }];
      await fx.putRelease({
        version: TARGET,
        sequence: 7,
        envelope: made.envelope,
        artifacts,
        expiresAt: at(7 * 24 * 3_600_000).getTime(),
      });
      expect(await store.offerRelease(TARGET)).toEqual({
        version: TARGET,
        sequence: 7,
        envelope: parseEnvelope(made.envelope),
        artifacts,
        expiresAt: at(7 * 24 * 3_600_000).getTime(),
      });
      expect(await store.offerRelease("9.9.9")).toBeUndefined();
    });
  });
});
