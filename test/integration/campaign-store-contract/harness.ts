/**
 * The harness of the campaign store contract (control/campaign-store/port.ts): each test file
 * of this folder runs its tests against both adapters, the PostgreSQL one (the product, on a
 * real database) and the memory one (unit tests and the deterministic simulation). Every test
 * runs on a fresh, empty store; times are fixed (the memory store runs on a manual clock;
 * lease takeovers follow a session's end, not a TTL).
 */
import { afterAll, beforeAll, beforeEach, describe } from "vitest";
import type { CampaignStore, NewOperation } from "../../../control/campaign-store/index.js";
import { campaignOf, type NodeSpec, T0, textOf } from "./builders.js";
import type { Fixture } from "./fixture.js";
import { memoryAdapter } from "./memory-adapter.js";
import { sqlAdapter } from "./sql-adapter.js";

/**
 * Which outbox rows `unacked` and `unackedIds` list: the filter of `unackedOperations`, its
 * `now` {@link T0} when not given.
 */
type UnackedFilter = Omit<Parameters<CampaignStore["unackedOperations"]>[0], "now"> & {
  readonly now?: Date;
};

/**
 * What a contract test file's body works with. `fx` and `store` stand for the current test's
 * fresh fixture and its store: every property read is forwarded to them, so the body may take
 * them once, when it is collected, and use them in any test.
 */
export interface StoreContract {
  /** The current test's fixture. */
  readonly fx: Fixture;
  /** The current test's store (the fixture's). */
  readonly store: CampaignStore;
  /** Inserts campaign `id` with `nodes` (in reverse canary order, as a shuffle) at `createdAt`. */
  insert(
    id: string,
    nodes: readonly NodeSpec[],
    createdAt?: number,
  ): Promise<ReturnType<typeof campaignOf>>;
  /** Writes outbox rows onto campaign `id` at `now` (a decision of its current version). */
  addOperations(id: string, operations: readonly NewOperation[], now: Date): Promise<boolean>;
  /** The stored version of campaign `id`; undefined for an unknown campaign. */
  versionOf(id: string): Promise<number | undefined>;
  /** The rows `unackedOperations` lists, each as its node, id and payload text. */
  unacked(filter?: UnackedFilter): Promise<{ nodeId: string; id: string; payload: string }[]>;
  /** The ids of the rows `unackedOperations` lists, in its order. */
  unackedIds(filter?: UnackedFilter): Promise<string[]>;
}

/**
 * A stand-in for the object `current()` answers at each use: property reads go to it, and
 * methods are bound to it.
 */
function forwardingTo<T extends object>(current: () => T): T {
  return new Proxy({} as T, {
    get(_stand, key) {
      const target = current();
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/**
 * Declares `body`'s tests once per adapter, as `the <adapter> campaign store: <title>`: the
 * adapter opens before the file's tests and closes after them, and each test gets a fresh
 * fixture.
 */
export function describeStoreContract(
  title: string,
  body: (contract: StoreContract) => void,
): void {
  describe.each([sqlAdapter(), memoryAdapter()])(
    `the $name campaign store: ${title}`,
    (adapter) => {
      let current: Fixture | undefined;
      const fixture = () => {
        if (current === undefined) throw new Error("the store is used outside a test");
        return current;
      };
      beforeAll(() => adapter.open());
      afterAll(() => adapter.close());
      beforeEach(async () => {
        current = await adapter.fresh();
      });

      const fx = forwardingTo(fixture);
      const store = forwardingTo(() => fixture().store);

      async function insert(id: string, nodes: readonly NodeSpec[], createdAt = T0) {
        const c = campaignOf(id, nodes, createdAt);
        await store.transaction((tx) =>
          tx.insertCampaign({
            campaign: c.campaign,
            nodes: [...c.nodes].reverse(),
            createdBy: "tester",
            createdByIp: "127.0.0.1",
            now: new Date(createdAt),
          }),
        );
        return c;
      }

      async function addOperations(id: string, operations: readonly NewOperation[], now: Date) {
        return store.transaction(async (tx) => {
          const row = await tx.readCampaign(id, true);
          return tx.writeDecision({
            campaignId: id,
            version: row?.version ?? 0,
            campaign: undefined,
            nodes: [],
            operations,
            appliedCommands: [],
            audits: [],
            now,
          });
        });
      }

      const versionOf = async (id: string) =>
        store.transaction(async (tx) => (await tx.readCampaign(id))?.version);

      const unacked = async (filter: UnackedFilter = {}) =>
        (await store.unackedOperations({ now: new Date(T0), ...filter })).map((o) => ({
          nodeId: o.nodeId,
          id: o.operation.id,
          payload: textOf(o.operation.bytes),
        }));
      const unackedIds = async (filter: UnackedFilter = {}) =>
        (await unacked(filter)).map((o) => o.id);

      body({ fx, store, insert, addOperations, versionOf, unacked, unackedIds });
    },
  );
}
