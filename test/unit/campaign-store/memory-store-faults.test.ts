/**
 * The memory store's injected database errors (control/campaign-store/memory/store-faults.ts),
 * which the simulation's "database errors" fault draws: an error before a call writes leaves
 * nothing applied; one after its commit leaves everything applied and still rejects, as a
 * connection lost once COMMIT was sent does.
 */
import { describe, expect, it } from "vitest";
import {
  MemoryCampaignStore,
  StoreCallError,
  type StoreFault,
  StoreFaultError,
  StoreOutageError,
} from "../../../control/campaign-store/index.js";
import { ManualClock } from "../../../control/manual-clock.js";

function storeStruckBy(fault: StoreFault | undefined) {
  const store = new MemoryCampaignStore(new ManualClock(1000));
  const calls: string[] = [];
  store.injectErrors((call) => {
    calls.push(call);
    return fault;
  });
  const heard: string[][] = [];
  store.listen(["ch"], { onNotify: (_channel, lines) => heard.push([...lines]) });
  return { store, calls, heard };
}

describe("injected database errors in the memory store", () => {
  it("before: the transaction's work never runs, and it rejects with a StoreCallError", async () => {
    const { store, calls } = storeStruckBy("before");
    let ran = false;
    const result = store.transaction(async () => {
      ran = true;
      return 1;
    });
    await expect(result).rejects.toBeInstanceOf(StoreCallError);
    expect(ran).toBe(false);
    expect(calls).toEqual(["transaction"]);
  });

  it("after_commit: the transaction's work ran and committed, and the caller is told it failed", async () => {
    const { store } = storeStruckBy("after_commit");
    let ran = false;
    await expect(
      store.transaction(async () => {
        ran = true;
        return 1;
      }),
    ).rejects.toThrow(/lost after COMMIT/);
    expect(ran).toBe(true);
  });

  it("a write struck before applies nothing; struck after its commit, it applied", async () => {
    const before = storeStruckBy("before");
    await expect(before.store.notify("ch", ["a"])).rejects.toBeInstanceOf(StoreCallError);
    expect(before.heard).toEqual([]);
    const after = storeStruckBy("after_commit");
    await expect(after.store.notify("ch", ["a"])).rejects.toBeInstanceOf(StoreCallError);
    expect(after.heard).toEqual([["a"]]);
  });

  it("no error drawn: the call runs as usual; injecting stops when the injector is removed", async () => {
    const { store, heard } = storeStruckBy(undefined);
    await store.notify("ch", ["a"]);
    store.injectErrors(() => "before");
    await expect(store.notify("ch", ["b"])).rejects.toBeInstanceOf(StoreCallError);
    store.injectErrors(undefined);
    await store.notify("ch", ["c"]);
    expect(heard).toEqual([["a"], ["c"]]);
  });

  it("an outage and an injected error are both database faults", () => {
    expect(new StoreOutageError("x")).toBeInstanceOf(StoreFaultError);
    expect(new StoreCallError("x")).toBeInstanceOf(StoreFaultError);
  });
});
