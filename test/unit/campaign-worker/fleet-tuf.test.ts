/**
 * Every start checks the release channel (config `tuf.dir`), not only an administrator's: the
 * leader's convergence campaigns and a rollout plan's group starts refuse a release that the
 * channel's TUF targets do not list at its sequence (every Agent on the channel would refuse it),
 * halting the desired version or the plan with the reason, and start nothing. Real TUF
 * metadata on disk, read by Control's own check; the memory stores and the manual clock.
 */
import { describe, expect, it } from "vitest";
import { createPlan, resolveSpec } from "../../../control/campaign/index.js";
import { unlistedReason } from "../../../control/tuf/listed.js";
import { writeTufChannel } from "../../helpers/tuf-channel.js";
import { desired, T0, world } from "./fleet-world.js";

async function channelWorld(listed: { version: string; sequence: number }[]) {
  const channel = await writeTufChannel(listed);
  const w = world(["n1", "n2"], {
    unlisted: (version, sequence) => unlistedReason(channel.dir, version, sequence),
  });
  return { w, channel };
}

describe("convergence and plan starts on a TUF release channel", () => {
  it("converges to a release the channel lists", async () => {
    const { w } = await channelWorld([{ version: "2.0.0", sequence: 2 }]);
    const d = desired();
    w.fleetStore.tables.desired.set(d.id, d);
    w.gateway.connect("n1");
    await w.runFor(2000);
    expect([...w.store.tables.campaigns.keys()]).toEqual([`${d.id}-1`]);
    expect(w.fleetStore.tables.desired.get(d.id)?.haltedAt).toBeUndefined();
    w.unlisten();
  });

  it.each<[string, { version: string; sequence: number }[], RegExp]>([
    [
      "not listed",
      [{ version: "1.5.0", sequence: 1 }],
      /2\.0\.0 is not listed in the release channel's TUF targets/,
    ],
    [
      "listed at another sequence",
      [{ version: "2.0.0", sequence: 7 }],
      /another sequence than its registered 2/,
    ],
  ])(
    "halts convergence to a desired version %s, with an audit row, and starts nothing",
    async (_, listed, reason) => {
      const { w } = await channelWorld(listed);
      const d = desired();
      w.fleetStore.tables.desired.set(d.id, d);
      w.gateway.connect("n1");
      await w.runFor(3000);
      expect(w.store.tables.campaigns.size).toBe(0);
      expect(w.gateway.sent).toEqual([]);
      const after = w.fleetStore.tables.desired.get(d.id);
      expect(after?.haltedAt).toBe(T0);
      expect(after?.haltedReason).toMatch(/^convergence to 2\.0\.0 halted: /);
      expect(after?.haltedReason).toMatch(reason);
      const audits = w.store.tables.audits.filter((a) => a.action === "convergence.halt");
      expect(audits).toHaveLength(1);
      expect(audits[0]?.message).toMatch(reason);
      expect(w.halted).toEqual([d.id]);
      // Halted once: later passes neither start nor audit again.
      await w.runFor(120_000);
      expect(w.store.tables.campaigns.size).toBe(0);
      expect(w.store.tables.audits.filter((a) => a.action === "convergence.halt")).toHaveLength(1);
      w.unlisten();
    },
  );

  const plan = (id: string) =>
    createPlan({
      id,
      template: resolveSpec({
        targetVersion: "2.0.0",
        batches: [
          { percent: 5, minDurationMs: 1_800_000 },
          { percent: 100, minDurationMs: 1_800_000 },
        ],
      }),
      groups: [{ name: "all", selector: { labels: {}, pools: ["p"], nodeIds: [] } }],
      waitMs: 0,
      now: T0,
      createdBy: "alice",
    });

  it("starts a plan's group on a release the channel lists", async () => {
    const { w } = await channelWorld([{ version: "2.0.0", sequence: 2 }]);
    w.gateway.connect("n1");
    await w.fleetStore.transaction((tx) => tx.insertPlan(plan("p-1"), new Date(T0)));
    await w.runFor(2000);
    expect(w.store.tables.campaigns.size).toBe(1);
    expect(w.fleetStore.tables.plans.get("p-1")?.plan.phase).toBe("running");
    w.unlisten();
  });

  it("halts a plan whose group's release the channel no longer lists, saying why, and starts nothing", async () => {
    const { w, channel } = await channelWorld([{ version: "2.0.0", sequence: 2 }]);
    // The channel is re-signed without 2.0.0 after the plan was admitted.
    await channel.list([{ version: "1.5.0", sequence: 1 }]);
    w.gateway.connect("n1");
    await w.fleetStore.transaction((tx) => tx.insertPlan(plan("p-2"), new Date(T0)));
    await w.runFor(2000);
    expect(w.store.tables.campaigns.size).toBe(0);
    const after = w.fleetStore.tables.plans.get("p-2")?.plan;
    expect(after?.phase).toBe("halted");
    expect(after?.message).toMatch(/2\.0\.0 is not listed in the release channel's TUF targets/);
    expect(
      w.store.tables.audits.some((a) => /not listed in the release channel/.test(a.message)),
    ).toBe(true);
    w.unlisten();
  });
});
