/**
 * Engine review R07 (worker): a node's platform is judged only when the campaign starts (plan.ts
 * `platform_unsupported`). A node that says Hello on a platform the target release lacks after
 * the start (re-imaged on other hardware under the same identity; a registry row stale at the
 * start) is offered anyway; the operation cannot be built (no artifact), so the node ends
 * `failed offer_failed` — a failure of its batch, which breaches a threshold-0 batch and rolls it
 * back. SPEC §9/O7: an agent whose platform the target release lacks is never sent the upgrade
 * and never counts as failed or timed_out. Expected: skipped `platform_unsupported`, out of the
 * threshold.
 */
import { describe, expect, it } from "vitest";
import { world } from "../campaign-worker/worker-world.js";

describe("a platform the release lacks, seen after the start", () => {
  it("is skipped platform_unsupported, not failed", async () => {
    const w = world(["n1", "n2"]);
    w.gateway.connect("n1");
    w.gateway.connect("n2");
    // n2's Hello (after the start) names linux-arm64; the release has linux-amd64 only.
    await w.start("c1", ["n1", "n2"], {
      disruptionBudgetPercent: 100,
      failureThresholdPercent: 0,
    });
    const live = w.gateway.connected("n2") as { platform: string };
    live.platform = "linux-arm64";
    const worker = w.worker();
    worker.listen();
    await worker.step();
    w.clock.advance(100);
    await worker.step();
    const n2 = w.nodesOf("c1").find((n) => n.nodeId === "n2");
    const c = w.store.tables.campaigns.get("c1")?.campaign;
    expect(n2?.state).toBe("skipped");
    expect(n2?.code).toBe("platform_unsupported");
    expect(c?.phase).toBe("running");
  });
});
