/**
 * Nodes disabled after their batch was first looked at (an administrator's disable that no
 * decision has read yet) cost one decision linear in the campaign, whatever their number:
 * when a decision's offers reach a disabled node, the registry rows of its batch's other
 * waiting nodes are read at once (`disabledOffers`, decision.ts), so the next round skips
 * every disabled one it reaches. Counted, never timed: the registry reads (calls, and rows
 * read) of that one decision, at 1,000 and 4,000 nodes with 2 % disabled and concurrency 1.
 * Found by the engine review (R09): each offer round found one disabled node and decided the
 * whole campaign again, D / C full decisions (×4 nodes cost ×16).
 */
import { describe, expect, it } from "vitest";
import { MemoryTransaction } from "../../../control/campaign-store/memory/memory-transaction.js";
import { OperationPhase } from "../../../proto/gen/agentcontrol/v1/agent_control_pb.js";
import { NEW, world } from "./worker-world.js";

async function oneDecisionAfterDisables(n: number, disabledShare: number) {
  const ids = Array.from({ length: n }, (_, i) => `n${String(i).padStart(6, "0")}`);
  const w = world(ids);
  for (const id of ids) w.gateway.connect(id);
  await w.start("c1", ids, { disruptionBudgetPercent: 100, concurrency: 1 });
  const worker = w.worker();
  worker.listen();
  await worker.step();
  const nodes = w.nodesOf("c1");
  const first = nodes.find((x) => x.state === "offered")?.nodeId as string;
  // The next nodes in canary order are disabled, written straight into the registry: no
  // notification reaches the leader.
  const order = [...nodes].sort((a, b) => a.order - b.order).map((x) => x.nodeId);
  const disabled = order.filter((id) => id !== first).slice(0, Math.round(n * disabledShare));
  for (const id of disabled) {
    const row = w.store.tables.registry.get(id);
    if (row) w.store.tables.registry.set(id, { ...row, enabled: false });
  }
  // The offered node comes back on the target: its slot frees.
  w.gateway.report(first, `c1/${first}/upgrade`, OperationPhase.RESTARTING);
  w.gateway.disconnect(first);
  w.clock.advance(1000);
  w.gateway.connect(first, "b1", NEW);
  w.clock.advance(100);
  const proto = MemoryTransaction.prototype as unknown as {
    readRegistry: (ids: readonly string[]) => Promise<unknown>;
  };
  const original = proto.readRegistry;
  let calls = 0;
  let rows = 0;
  proto.readRegistry = function (this: unknown, ids: readonly string[]) {
    calls++;
    rows += ids.length;
    return original.call(this, ids);
  };
  try {
    await worker.step();
  } finally {
    proto.readRegistry = original;
  }
  const after = w.nodesOf("c1");
  return {
    disabled: disabled.length,
    skipped: after.filter((x) => x.code === "node_disabled").length,
    offered: after.filter((x) => x.state === "offered").length,
    calls,
    rows,
  };
}

describe("nodes disabled after their batch's first look", () => {
  it("are all skipped by one decision whose registry reads grow linearly with the campaign (1,000 vs 4,000 nodes, 2 % disabled, concurrency 1)", async () => {
    const small = await oneDecisionAfterDisables(1000, 0.02);
    const large = await oneDecisionAfterDisables(4000, 0.02);
    for (const r of [small, large]) {
      expect(r.skipped).toBe(r.disabled);
      expect(r.offered).toBe(1);
    }
    // A round per disabled node read the registry 20 and 80 times.
    expect(large.calls).toBeLessThanOrEqual(small.calls);
    expect(large.calls).toBeLessThanOrEqual(6);
    expect(large.rows).toBeLessThanOrEqual(small.rows * 4.5);
  }, 300_000);
});
