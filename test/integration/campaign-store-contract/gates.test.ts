/**
 * The campaign store contract (see ./harness.ts), run against both adapters: the other inputs
 * of a decision besides agents' facts: gate results (recorded and read by batch and gate) and
 * the administrator commands not applied yet.
 */
import { describe, expect, it } from "vitest";
import { at, T0 } from "./builders.js";
import { describeStoreContract } from "./harness.js";

describeStoreContract("gates and commands", ({ fx, store, insert }) => {
  describe("recordGateResult and readGateResults", () => {
    const result = (
      gate: number,
      status: "pass" | "fail" | "unreachable",
      t: number,
      extra: { batch?: number; keep?: number } = {},
    ) =>
      store.recordGateResult({
        campaignId: "c1",
        batch: extra.batch ?? 0,
        gate,
        status,
        at: at(t),
        value: `v${t}`,
        message: `${status} at ${t}`,
        keepFailuresAfter: extra.keep,
      });
    const read = (batch = 0, id = "c1") => store.transaction((tx) => tx.readGateResults(id, batch));

    it("keeps the latest result per batch and gate, read by gate, and drops results of unknown campaigns", async () => {
      await insert("c1", [{ id: "n1" }]);
      await result(1, "pass", 1);
      await result(0, "pass", 2);
      await result(0, "pass", 3);
      await result(0, "fail", 4, { batch: 1 });
      await store.recordGateResult({
        campaignId: "ghost",
        batch: 0,
        gate: 0,
        status: "fail",
        at: at(5),
        value: "x",
        message: "x",
      });
      expect(await read()).toEqual([
        {
          batch: 0,
          gate: 0,
          status: "pass",
          at: at(3).getTime(),
          value: "v3",
          message: "pass at 3",
          unreachableSince: undefined,
        },
        {
          batch: 0,
          gate: 1,
          status: "pass",
          at: at(1).getTime(),
          value: "v1",
          message: "pass at 1",
          unreachableSince: undefined,
        },
      ]);
      expect((await read(1)).map((r) => r.status)).toEqual(["fail"]);
      expect(await read(0, "ghost")).toEqual([]);
    });

    it("keeps a failing result newer than keepFailuresAfter, and replaces one at or before it", async () => {
      await insert("c1", [{ id: "n1" }]);
      await result(0, "fail", 2);
      await result(0, "pass", 3);
      expect((await read()).map((r) => `${r.status}@${r.value}`)).toEqual(["fail@v2"]);
      await result(0, "pass", 4, { keep: at(2).getTime() });
      expect((await read()).map((r) => `${r.status}@${r.value}`)).toEqual(["pass@v4"]);
    });

    it("counts an unreachable streak from its first result, and ends it with a reachable one", async () => {
      await insert("c1", [{ id: "n1" }]);
      await result(0, "unreachable", 2);
      await result(0, "unreachable", 5);
      expect(await read()).toMatchObject([
        { status: "unreachable", at: at(5).getTime(), unreachableSince: at(2).getTime() },
      ]);
      await result(0, "pass", 6);
      await result(0, "unreachable", 7);
      expect(await read()).toMatchObject([
        { status: "unreachable", unreachableSince: at(7).getTime() },
      ]);
    });
  });

  describe("pendingCommands", () => {
    it("reads a campaign's commands not applied yet, oldest first", async () => {
      await insert("c1", [{ id: "n1" }]);
      await insert("c2", [{ id: "n2" }], T0 + 1);
      const pause = await fx.addCommand("c1", "pause", false);
      await fx.addCommand("c2", "pause", false);
      const abort = await fx.addCommand("c1", "abort", true);
      const resume = await fx.addCommand("c1", "resume", false);
      const unknown = await fx.addCommand("c1", "dance", false);
      await store.transaction((tx) =>
        tx.writeDecision({
          campaignId: "c1",
          version: 1,
          campaign: undefined,
          nodes: [],
          operations: [],
          appliedCommands: [{ id: abort, outcome: "applied" }],
          audits: [],
          now: at(1),
        }),
      );
      const row = (id: string, kind: string, rollback: boolean) => ({
        id,
        kind,
        rollback,
        gate: null,
        reason: `${kind} please`,
        actor: "operator",
        actor_ip: "10.0.0.1",
      });
      expect(await store.transaction((tx) => tx.pendingCommands("c1"))).toEqual([
        row(pause, "pause", false),
        row(resume, "resume", false),
        row(unknown, "dance", false),
      ]);
      expect(await store.transaction((tx) => tx.pendingCommands("nope"))).toEqual([]);
    });
  });
});
