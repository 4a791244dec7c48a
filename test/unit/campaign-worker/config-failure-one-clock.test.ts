/**
 * A config failure is stamped by the Control holding the node's stream, on its clock; the offer
 * by the leader. Whether a failure came after the offer is read on the leader's clock, from
 * when the leader first loaded it (docs/decisions.md, "One clock for ordering across Controls").
 */
import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../../../control/agents/events.js";
import { NEW, world } from "./worker-world.js";

const MIN = 60_000;

describe("a config failure through a Control whose clock is 2 s behind the leader's", () => {
  it("fails the node that came back on the target on a new boot, though its stamp is before the offer", async () => {
    const w = world(["n1"]);
    w.gateway.connect("n1");
    await w.start("c1", ["n1"], {
      batches: [{ percent: 100, minDurationMs: 30 * MIN }],
      disruptionBudgetPercent: 100,
      failureThresholdPercent: 100,
    });
    const worker = w.worker();
    worker.listen();
    await worker.step();
    const offeredAt = w.nodesOf("c1")[0]?.offeredAt as number;
    // Back at once on the target with a new boot (it restarted through another Control).
    w.gateway.disconnect("n1");
    w.clock.advance(500);
    w.gateway.connect("n1", "b1", NEW);
    await worker.step();
    expect(w.nodesOf("c1")[0]?.state).toBe("verifying");
    // Its configuration fails at once; the holder's clock, 2 s behind, stamps it before the offer.
    w.clock.advance(500);
    const emit = (w.gateway as unknown as { emit(e: AgentEvent): void }).emit.bind(w.gateway);
    emit({
      kind: "config_status",
      nodeId: "n1",
      ok: false,
      message: "bad config",
      at: new Date(w.clock.ms - 2000),
    } as AgentEvent);
    expect(w.clock.ms - 2000).toBeLessThan(offeredAt);
    w.clock.advance(100);
    await worker.step();
    expect(w.nodesOf("c1")[0]).toMatchObject({ state: "failed", code: "config_apply_failed" });
  });
});
