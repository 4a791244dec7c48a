/**
 * The campaign store contract (see ./harness.ts), run against both adapters: what a decision
 * reads besides its campaign (readRegistry, the facts agents reported) and how those facts are
 * recorded; gate results and pending commands in ./gates.test.ts.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { at, op, T0 } from "./builders.js";
import type { RegistryInput } from "./fixture.js";
import { describeStoreContract } from "./harness.js";

describeStoreContract("facts", ({ fx, store, insert, addOperations, unackedIds }) => {
  describe("readRegistry", () => {
    const n1: RegistryInput = {
      id: "n1",
      pool: "p",
      boot_id: "b1",
      agent_version: "1.0.0",
      capabilities: ["upgrade.v1", "config.v1"],
      platform: "linux-amd64",
      enabled: true,
      last_seen: at(-30_000),
      online: true,
      held_by: "control-a",
      revoked: false,
    };
    const n2: RegistryInput = {
      ...n1,
      id: "n2",
      boot_id: "b2",
      agent_version: "1.1.0",
      capabilities: [],
      platform: "linux-arm64",
      enabled: false,
      last_seen: null,
      online: false,
      held_by: null,
      revoked: true,
    };

    it("reads the rows of known ids with enabled, revoked, last_seen, online and held_by, leaving unknown ids out and each id once", async () => {
      await fx.putNode(n1);
      await fx.putNode(n2);
      const rows = await store.transaction((tx) => tx.readRegistry(["n2", "ghost", "n1", "n2"]));
      const { pool: _p1, ...row1 } = n1;
      const { pool: _p2, ...row2 } = n2;
      expect([...rows].sort((a, b) => a.id.localeCompare(b.id))).toEqual([row1, row2]);
    });

    it("reads nothing for no ids", async () => {
      await fx.putNode(n1);
      expect(await store.transaction((tx) => tx.readRegistry([]))).toEqual([]);
    });
  });

  describe("recordFacts, readOperationFacts and readConfigFailures", () => {
    const report = (id: string, nodeId: string, phase: string, ms: number) => ({
      id,
      nodeId,
      phase,
      code: `${phase.toLowerCase()}_code`,
      message: `${phase} message`,
      version: "2.0.0",
      at: at(ms),
      bootId: `${nodeId}-boot-${ms}`,
    });
    const factsOf = async (campaignId: string, nodeIds?: readonly string[]) =>
      (await store.transaction((tx) => tx.readOperationFacts(campaignId, nodeIds)))
        .map((f) => ({ id: f.id, phase: f.report_phase, at: f.report_at, failed: f.failed_at }))
        .sort((a, b) => a.id.localeCompare(b.id));

    beforeEach(async () => {
      await insert("c1", [
        { id: "n1", state: "offered" },
        { id: "n2", state: "offered" },
        { id: "n3", state: "offered" },
      ]);
      await addOperations(
        "c1",
        [op("c1", "n1", "upgrade"), op("c1", "n2", "upgrade"), op("c1", "n3", "upgrade")],
        at(1),
      );
    });

    it("writes a report onto its outbox row only when id AND node match", async () => {
      await store.recordFacts([report("c1/n1/upgrade", "n2", "APPLYING", 10)], []);
      expect(await factsOf("c1")).toEqual([]);
      expect(await fx.operation("c1/n1/upgrade")).toMatchObject({ acked_at: null });
      expect(await unackedIds()).toEqual(["c1/n1/upgrade", "c1/n2/upgrade", "c1/n3/upgrade"]);

      await store.recordFacts([report("c1/n1/upgrade", "n1", "APPLYING", 10)], []);
      const facts = await store.transaction((tx) => tx.readOperationFacts("c1"));
      expect(facts).toEqual([
        {
          id: "c1/n1/upgrade",
          node_id: "n1",
          report_phase: "APPLYING",
          report_code: "applying_code",
          report_message: "APPLYING message",
          report_version: "2.0.0",
          report_at: at(10),
          report_boot_id: "n1-boot-10",
          report_seq: facts[0]?.report_seq,
          failed_at: null,
          failure: null,
        },
      ]);
      expect(await unackedIds()).toEqual(["c1/n2/upgrade", "c1/n3/upgrade"]);
    });

    it("sends an operation its node answered DEFERRED afresh when a decision offers it again, and keeps any other", async () => {
      await store.recordFacts(
        [
          report("c1/n1/upgrade", "n1", "DEFERRED", 10),
          report("c1/n2/upgrade", "n2", "ACCEPTED", 10),
        ],
        [],
      );
      expect(await unackedIds()).toEqual(["c1/n3/upgrade"]);
      await addOperations("c1", [op("c1", "n1", "upgrade"), op("c1", "n2", "upgrade")], at(70));
      // The deferred one has no report any more; the accepted one kept its own.
      expect(await factsOf("c1")).toEqual([
        { id: "c1/n2/upgrade", phase: "ACCEPTED", at: at(10), failed: null },
      ]);
      // Oldest first: the new offer is the newest row.
      expect(await unackedIds()).toEqual(["c1/n3/upgrade", "c1/n1/upgrade"]);
    });

    it("sets acked_at from the first report only", async () => {
      await store.recordFacts([report("c1/n1/upgrade", "n1", "ACCEPTED", 10)], []);
      expect(await fx.operation("c1/n1/upgrade")).toMatchObject({ acked_at: at(10) });
      await store.recordFacts([report("c1/n1/upgrade", "n1", "APPLYING", 20)], []);
      expect(await fx.operation("c1/n1/upgrade")).toMatchObject({ acked_at: at(10) });
    });

    // One clock for ordering across Controls (docs/decisions.md): a report's stamp is the clock
    // of the Control that held the node's stream, and two Controls' clocks are never compared.
    describe("in the database's order, never by the holders' stamps", () => {
      const seqOf = async (id: string) => {
        const rows = await store.transaction((tx) => tx.readOperationFacts("c1"));
        const seq = rows.find((r) => r.id === id)?.report_seq;
        return seq === null || seq === undefined ? undefined : Number(seq);
      };

      it("keeps a final report written after a progress report stamped later by a Control 5 s ahead", async () => {
        // DOWNLOADING through a Control 5 s ahead, then FAILED through another one.
        await store.recordFacts([report("c1/n1/upgrade", "n1", "DOWNLOADING", 5_000)], []);
        await store.recordFacts([report("c1/n1/upgrade", "n1", "FAILED", 1_000)], []);
        expect(await factsOf("c1")).toEqual([
          { id: "c1/n1/upgrade", phase: "FAILED", at: at(1_000), failed: null },
        ]);
      });

      it("numbers each report it keeps above every report written before it, whatever their stamps", async () => {
        await store.recordFacts([report("c1/n1/upgrade", "n1", "ACCEPTED", 9_000)], []);
        const first = await seqOf("c1/n1/upgrade");
        await store.recordFacts([report("c1/n2/upgrade", "n2", "DEFERRED", 1)], []);
        const second = await seqOf("c1/n2/upgrade");
        await store.recordFacts([report("c1/n1/upgrade", "n1", "DOWNLOADING", 2)], []);
        const third = await seqOf("c1/n1/upgrade");
        expect(first).toBeTypeOf("number");
        expect(second).toBeGreaterThan(first as number);
        expect(third).toBeGreaterThan(second as number);
        // Read again, the same report has the same number.
        expect(await seqOf("c1/n1/upgrade")).toBe(third);
      });

      it("takes a second DEFERRED as a new report with a higher number", async () => {
        await store.recordFacts([report("c1/n1/upgrade", "n1", "DEFERRED", 5_000)], []);
        const first = await seqOf("c1/n1/upgrade");
        await store.recordFacts([report("c1/n1/upgrade", "n1", "DEFERRED", 1_000)], []);
        expect(await seqOf("c1/n1/upgrade")).toBeGreaterThan(first as number);
        expect(await factsOf("c1")).toEqual([
          { id: "c1/n1/upgrade", phase: "DEFERRED", at: at(1_000), failed: null },
        ]);
      });

      it("lets no report replace one further along the operation (a Control that wrote late), and keeps its number", async () => {
        // The Agent moves one operation forward only: a progress report written after a later
        // phase, or after a final one, was held back by the Control that received it.
        await store.recordFacts([report("c1/n1/upgrade", "n1", "APPLYING", 20)], []);
        await store.recordFacts([report("c1/n2/upgrade", "n2", "FAILED", 20)], []);
        await store.recordFacts([report("c1/n3/upgrade", "n3", "ACCEPTED", 20)], []);
        const kept = await seqOf("c1/n1/upgrade");
        await store.recordFacts(
          [
            report("c1/n1/upgrade", "n1", "DOWNLOADING", 30),
            report("c1/n2/upgrade", "n2", "APPLYING", 30),
            report("c1/n3/upgrade", "n3", "DEFERRED", 30),
          ],
          [],
        );
        expect(await factsOf("c1")).toEqual([
          { id: "c1/n1/upgrade", phase: "APPLYING", at: at(20), failed: null },
          { id: "c1/n2/upgrade", phase: "FAILED", at: at(20), failed: null },
          { id: "c1/n3/upgrade", phase: "ACCEPTED", at: at(20), failed: null },
        ]);
        expect(await seqOf("c1/n1/upgrade")).toBe(kept);
      });

      it("lets progress replace a DEFERRED (the Agent forgot the operation and took a later delivery)", async () => {
        await store.recordFacts([report("c1/n1/upgrade", "n1", "DEFERRED", 50)], []);
        await store.recordFacts([report("c1/n1/upgrade", "n1", "ACCEPTED", 10)], []);
        expect(await factsOf("c1")).toEqual([
          { id: "c1/n1/upgrade", phase: "ACCEPTED", at: at(10), failed: null },
        ]);
      });
    });

    it("raises the node's confirmed sequence to the campaign's target on a CONFIRMED report of its confirm, and on nothing else", async () => {
      const node = (id: string) => ({
        id,
        pool: "",
        boot_id: "b",
        agent_version: "2.0.0",
        capabilities: ["upgrade.v1"],
        platform: "linux-amd64",
        enabled: true,
        last_seen: at(0),
      });
      for (const id of ["n1", "n2", "n3"]) await fx.putNode(node(id));
      await addOperations("c1", [op("c1", "n1", "confirm"), op("c1", "n2", "confirm")], at(2));
      await store.recordFacts(
        [
          report("c1/n1/confirm", "n1", "CONFIRMED", 10),
          report("c1/n2/confirm", "n2", "ACCEPTED", 10),
          report("c1/n3/upgrade", "n3", "CONFIRMED", 10),
        ],
        [],
      );
      const sequences = async () =>
        Promise.all(["n1", "n2", "n3"].map((id) => fx.confirmedSequence(id)));
      expect(await sequences()).toEqual([2, 0, 0]);
      // The same report again changes nothing.
      await store.recordFacts([report("c1/n1/confirm", "n1", "CONFIRMED", 20)], []);
      expect(await sequences()).toEqual([2, 0, 0]);
    });

    it("changes nothing for reports on unknown operations", async () => {
      await store.recordFacts(
        [
          report("c1/n9/upgrade", "n9", "APPLYING", 10),
          report("ghost/n1/upgrade", "n1", "APPLYING", 10),
        ],
        [],
      );
      expect(await factsOf("c1")).toEqual([]);
      expect(await unackedIds()).toHaveLength(3);
    });

    it("reads the facts of reported and failed rows only, of the named nodes when given", async () => {
      await insert("c2", [{ id: "n1", state: "offered" }], T0 + 1);
      await addOperations("c2", [op("c2", "n1", "upgrade")], at(2));
      await addOperations(
        "c1",
        [op("c1", "n2", "rollback", { payload: null, failure: "cannot build" })],
        at(3),
      );
      await store.recordFacts(
        [
          report("c1/n1/upgrade", "n1", "RESTARTING", 10),
          report("c2/n1/upgrade", "n1", "FAILED", 11),
        ],
        [],
      );
      expect(await factsOf("c1")).toEqual([
        { id: "c1/n1/upgrade", phase: "RESTARTING", at: at(10), failed: null },
        { id: "c1/n2/rollback", phase: null, at: null, failed: at(3) },
      ]);
      expect(await factsOf("c1", ["n2", "n3"])).toEqual([
        { id: "c1/n2/rollback", phase: null, at: null, failed: at(3) },
      ]);
      expect(await factsOf("c1", [])).toEqual([]);
      expect(await factsOf("c2")).toEqual([
        { id: "c2/n1/upgrade", phase: "FAILED", at: at(11), failed: null },
      ]);
    });

    it("reads config failures in the order they were written, not by the stamps of the Controls that received them", async () => {
      // Through a Control 5 s ahead, then through another.
      await store.recordFacts(
        [],
        [{ campaignId: "c1", nodeId: "n1", at: at(5_000), bootId: "b1", message: "first" }],
      );
      await store.recordFacts(
        [],
        [{ campaignId: "c1", nodeId: "n1", at: at(1_000), bootId: "b1", message: "second" }],
      );
      expect(
        (await store.transaction((tx) => tx.readConfigFailures("c1"))).map((f) => f.message),
      ).toEqual(["first", "second"]);
    });

    it("records config failures of existing campaigns only, read oldest first and by node", async () => {
      await insert("done", [{ id: "n1", state: "succeeded" }], T0 + 1);
      await store.recordFacts(
        [],
        [
          { campaignId: "c1", nodeId: "n2", at: at(5), bootId: "b2", message: "bad config" },
          { campaignId: "ghost", nodeId: "n1", at: at(6), bootId: "b1", message: "lost" },
          { campaignId: "done", nodeId: "n1", at: at(6), bootId: null, message: "late" },
        ],
      );
      // One call each: the SQL adapter numbers the rows of one call in no particular order.
      await store.recordFacts(
        [],
        [{ campaignId: "c1", nodeId: "n1", at: at(7), bootId: null, message: "worse config" }],
      );
      await store.recordFacts(
        [],
        [{ campaignId: "c1", nodeId: "n2", at: at(8), bootId: "b2", message: "still bad" }],
      );
      expect(await store.transaction((tx) => tx.readConfigFailures("c1"))).toEqual([
        { node_id: "n2", at: at(5), boot_id: "b2", message: "bad config" },
        { node_id: "n1", at: at(7), boot_id: null, message: "worse config" },
        { node_id: "n2", at: at(8), boot_id: "b2", message: "still bad" },
      ]);
      expect(await store.transaction((tx) => tx.readConfigFailures("c1", ["n2"]))).toEqual([
        { node_id: "n2", at: at(5), boot_id: "b2", message: "bad config" },
        { node_id: "n2", at: at(8), boot_id: "b2", message: "still bad" },
      ]);
      expect(await store.transaction((tx) => tx.readConfigFailures("c1", []))).toEqual([]);
      expect(await store.transaction((tx) => tx.readConfigFailures("done"))).toEqual([
        { node_id: "n1", at: at(6), boot_id: null, message: "late" },
      ]);
      expect(await store.transaction((tx) => tx.readConfigFailures("ghost"))).toEqual([]);
    });
  });
});
