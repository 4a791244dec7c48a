/**
 * The contract of the admin store's node writes (control/campaign-store/admin-port.ts, the
 * `nodes` of a fleet transaction) on both adapters: PostgreSQL (the product, a real database)
 * and memory (the simulation). Every test runs on a fresh, empty store.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { CUTOFF_CHANNEL, NODES_CHANNEL } from "../../control/shared/notify-channels.js";
import { at, type Fixture, memoryAdapter, sqlAdapter } from "./fleet-store-fixtures.js";

describe.each([sqlAdapter(), memoryAdapter()])("the $name admin store", (adapter) => {
  let fx: Fixture;
  const stops: (() => Promise<void>)[] = [];
  beforeAll(() => adapter.open(), 60_000);
  afterAll(() => adapter.close());
  beforeEach(async () => {
    fx = await adapter.fresh();
  });
  afterEach(async () => {
    for (const stop of stops.splice(0)) await stop();
  });

  const until = async (done: () => boolean, what: string) => {
    for (let i = 0; i < 500 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
    if (!done()) throw new Error(`timed out waiting for ${what}`);
  };
  /** The node ids heard on `channel` (the cut-off's by default), once the listener is up. */
  const cutOffs = async (channel = CUTOFF_CHANNEL) => {
    const heard: string[] = [];
    let ready = false;
    stops.push(
      fx.campaigns.listen([channel], {
        onNotify: (_channel, lines) => heard.push(...lines),
        onGap: () => {
          ready = true;
        },
      }),
    );
    await until(() => ready, "the listener");
    return heard;
  };
  const read = (id: string) => fx.fleet.transaction((tx) => tx.nodes.readNode(id));

  it("reads a node's administrative state, and nothing for an unknown id", async () => {
    await fx.putNode({ id: "a" });
    await fx.putNode({ id: "b", enabled: false });
    expect(await read("a")).toEqual({
      id: "a",
      enabled: true,
      disabledReason: "",
      resetAt: undefined,
    });
    expect(await read("b")).toMatchObject({ id: "b", enabled: false, resetAt: undefined });
    expect(await read("nope")).toBeUndefined();
  });

  it("disables a node with its reason and enables it again, clearing the reason", async () => {
    await fx.putNode({ id: "a" });
    expect(
      await fx.fleet.transaction((tx) => tx.nodes.setEnabled("a", false, "broken disk", at(1))),
    ).toBe(true);
    expect(await read("a")).toMatchObject({ enabled: false, disabledReason: "broken disk" });
    const fleet = await fx.fleet.transaction((tx) => tx.readFleet());
    expect(fleet.find((r) => r.id === "a")?.enabled).toBe(false);
    expect(
      await fx.fleet.transaction((tx) => tx.nodes.setEnabled("a", true, "ignored", at(2))),
    ).toBe(true);
    expect(await read("a")).toMatchObject({ enabled: true, disabledReason: "" });
  });

  it("tells the leader of a disable and of an enable once committed (the node registry's channel)", async () => {
    await fx.putNode({ id: "a" });
    const heard = await cutOffs(NODES_CHANNEL);
    const seenInside: string[][] = [];
    await fx.fleet.transaction(async (tx) => {
      await tx.nodes.setEnabled("a", false, "broken disk", at(1));
      await new Promise((r) => setTimeout(r, 50));
      seenInside.push([...heard]);
    });
    expect(seenInside).toEqual([[]]);
    await until(() => heard.length > 0, "the disable");
    await fx.fleet.transaction((tx) => tx.nodes.setEnabled("a", true, "", at(2)));
    await until(() => heard.length > 1, "the enable");
    expect(heard).toEqual(["a", "a"]);
  });

  it("refuses to enable or disable an unknown node and writes nothing", async () => {
    expect(await fx.fleet.transaction((tx) => tx.nodes.setEnabled("x", false, "", at(1)))).toBe(
      false,
    );
    expect(await read("x")).toBeUndefined();
    expect(await fx.fleet.transaction((tx) => tx.readFleet())).toEqual([]);
  });

  it("changes nothing when the transaction that disabled or reset a node throws", async () => {
    await fx.putNode({ id: "a" });
    const heard = await cutOffs();
    await expect(
      fx.fleet.transaction(async (tx) => {
        await tx.nodes.setEnabled("a", false, "no", at(1));
        await tx.nodes.resetCredential("a", at(1));
        throw new Error("rolled back");
      }),
    ).rejects.toThrow("rolled back");
    expect(await read("a")).toEqual({
      id: "a",
      enabled: true,
      disabledReason: "",
      resetAt: undefined,
    });
    // A later cut-off arrives alone: the rolled-back one was never sent.
    await fx.putNode({ id: "b" });
    await fx.fleet.transaction((tx) => tx.nodes.resetCredential("b", at(2)));
    await until(() => heard.length > 0, "the cut-off of b");
    expect(heard).toEqual(["b"]);
  });

  it("resets a node's credential at the time given and tells every Control to cut its streams once committed", async () => {
    await fx.putNode({ id: "a" });
    await fx.putNode({ id: "b" });
    const heard = await cutOffs();
    const seenInside: string[][] = [];
    expect(
      await fx.fleet.transaction(async (tx) => {
        const done = await tx.nodes.resetCredential("a", at(5000));
        await new Promise((r) => setTimeout(r, 50));
        seenInside.push([...heard]);
        return done;
      }),
    ).toBe(true);
    expect(seenInside).toEqual([[]]);
    await until(() => heard.length > 0, "the cut-off");
    expect(heard).toEqual(["a"]);
    expect(await read("a")).toMatchObject({ enabled: true, resetAt: at(5000).getTime() });
    expect((await read("b"))?.resetAt).toBeUndefined();
  });

  it("refuses to reset an unknown node and sends no cut-off", async () => {
    const heard = await cutOffs();
    expect(await fx.fleet.transaction((tx) => tx.nodes.resetCredential("x", at(1)))).toBe(false);
    await new Promise((r) => setTimeout(r, 100));
    expect(heard).toEqual([]);
  });
});
