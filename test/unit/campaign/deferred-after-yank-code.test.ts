/**
 * Engine review R15 (record): a node whose offer was out when a yank stopped its campaign (on_breach stop)
 * and that then answers DEFERRED is canceled with code `batch_failed`, while the waiting nodes
 * the yank canceled carry `release_yanked` (SPEC §10: `release_yanked`, "a campaign or node
 * stopped by a yank"). deferral.ts `judgeDeferred`: `code === "aborted" ? "aborted" :
 * "batch_failed"` (the same for a stop on max_failures_exceeded / min_canaries_unmet).
 */
import { describe, expect, it } from "vitest";
import { fleet, nodeOf, report, start, tick } from "./harness.js";

describe("a deferral answered after a yank stopped the campaign", () => {
  it("is canceled release_yanked, as the waiting nodes the yank canceled", () => {
    const h = start(fleet(3), {
      batches: [{ percent: 100, minDurationMs: 0 }],
      disruptionBudgetPercent: 100,
      concurrency: 1,
      onBreach: "stop",
    });
    tick(h);
    const offered = h.nodes.find((n) => n.state === "offered")?.nodeId as string;
    const yanked = { yanked: { reason: "bad build" } };
    tick(h, [], yanked);
    expect(h.campaign.phase).toBe("failed");
    const waitingCodes = h.nodes.filter((n) => n.state === "canceled").map((n) => n.code);
    report(h, offered, "DEFERRED", "upgrade", { code: "deferred", message: "busy" });
    tick(h, [], yanked);
    expect(waitingCodes).toEqual(["release_yanked", "release_yanked"]);
    expect(nodeOf(h, offered).code).toBe("release_yanked");
  });
});
