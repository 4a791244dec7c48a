/**
 * `campaign retry` after a rollback, on the pure `planRetry`: the nodes a rollback took back
 * (`rolled_back`, and `rollback_failed`: neither ended on the target for this campaign) are taken
 * again with the failed, timed-out, skipped and canceled ones; and a retry may change the
 * settings an operator would change on a second attempt, the rest kept as they were.
 */
import { describe, expect, it } from "vitest";
import {
  type CampaignSpecInput,
  DEFAULT_POLICY,
  planRetry,
  resolveSpec,
} from "../../../control/campaign/index.js";
import {
  advance,
  batchIds,
  bringBack,
  configFails,
  fleet,
  type Harness,
  inState,
  MIN,
  nodeOf,
  OLD,
  reboot,
  report,
  start,
  tick,
} from "./harness.js";

/** Two batches of four nodes each that last 30 minutes: the canaries wait verifying. */
const twoBatches: Partial<CampaignSpecInput> = {
  batches: [
    { percent: 50, minDurationMs: 30 * MIN },
    { percent: 100, minDurationMs: 30 * MIN },
  ],
  failureThresholdPercent: 0,
  disruptionBudgetPercent: 100,
  configGraceMs: 0,
};

/** The first batch's nodes back on the target, verifying, while its minimum duration runs. */
function canariesVerifying(): { h: Harness; canaries: string[]; rest: string[] } {
  const h = start(fleet(8), twoBatches);
  tick(h);
  const canaries = batchIds(h, 0);
  for (const id of canaries) report(h, id, "RESTARTING");
  bringBack(h, canaries);
  tick(h);
  for (const id of canaries) expect(nodeOf(h, id).state).toBe("verifying");
  return { h, canaries, rest: batchIds(h, 1) };
}

describe("a retry after a rollback", () => {
  it("after abort --rollback takes the nodes rolled back with the canceled ones, in canary order", () => {
    const { h, canaries, rest } = canariesVerifying();
    tick(h, [{ kind: "abort", rollback: true, reason: "wrong day" }]);
    expect(inState(h, "rolling_back").sort()).toEqual([...canaries].sort());
    for (const id of canaries) reboot(h, id, OLD);
    tick(h);
    expect(h.campaign).toMatchObject({ phase: "aborted" });
    expect(h.campaign.finishedAt).toBeDefined();
    for (const id of canaries) expect(nodeOf(h, id).state).toBe("rolled_back");

    const r = planRetry(h.campaign, h.nodes);
    if (!r.ok) expect.fail(r.message);
    expect(r.nodeIds).toEqual([...canaries, ...rest]);
    expect(r.spec.selector.nodeIds).toEqual(r.nodeIds);
  });

  it("after a breach rolled back takes the rolled-back nodes, and a node whose rollback failed", () => {
    const { h, canaries } = canariesVerifying();
    const [refused, ...others] = canaries as [string, ...string[]];
    // One more canary fails its config (a breach at threshold 0): the batch rolls back.
    h.now += 1000;
    configFails(h, others[0] as string);
    tick(h);
    expect(h.campaign.phase).toBe("rolling_back");
    report(h, refused, "REFUSED", "rollback");
    for (const id of others.slice(1)) reboot(h, id, OLD);
    reboot(h, others[0] as string, OLD);
    tick(h);
    advance(h, 30 * MIN);
    expect(h.campaign.finishedAt).toBeDefined();
    expect(nodeOf(h, refused).state).toBe("rollback_failed");

    const r = planRetry(h.campaign, h.nodes);
    if (!r.ok) expect.fail(r.message);
    for (const id of canaries) expect(r.nodeIds).toContain(id);
    expect(r.nodeIds).toHaveLength(8);
  });
});

describe("a retry's settings", () => {
  const ended = (): Harness => {
    const { h, canaries } = canariesVerifying();
    tick(h, [{ kind: "abort", rollback: true }]);
    for (const id of canaries) reboot(h, id, OLD);
    tick(h);
    expect(h.campaign.finishedAt).toBeDefined();
    return h;
  };

  it("replace the retried campaign's batches, threshold and on_breach, and keep every other setting and its exclusions", () => {
    const h = ended();
    const r = planRetry(h.campaign, h.nodes, ["node-007"], {
      batches: [
        { percent: 25, minDurationMs: 10 * MIN },
        { percent: 100, minDurationMs: 10 * MIN },
      ],
      failureThresholdPercent: 20,
      onBreach: "pause",
    });
    if (!r.ok) expect.fail(r.message);
    expect(r.spec).toEqual({
      ...h.campaign.spec,
      batches: [
        { percent: 25, minDurationMs: 10 * MIN },
        { percent: 100, minDurationMs: 10 * MIN },
      ],
      failureThresholdPercent: 20,
      onBreach: "pause",
      selector: { labels: {}, pools: [], nodeIds: r.nodeIds },
      exclude: { nodeIds: ["node-007"], tags: {} },
    });
    expect(r.nodeIds).not.toContain("node-007");
  });

  it("without settings, the spec is the retried campaign's over the retried nodes", () => {
    const h = ended();
    const r = planRetry(h.campaign, h.nodes);
    if (!r.ok) expect.fail(r.message);
    expect(r.spec).toEqual({
      ...h.campaign.spec,
      selector: { labels: {}, pools: [], nodeIds: r.nodeIds },
    });
  });

  it("a key given as undefined clears an optional setting; batches replace a ramp and a ramp replaces batches", () => {
    const h = ended();
    const budgeted = {
      ...h.campaign,
      spec: resolveSpec({
        ...h.campaign.spec,
        maxFailures: { kind: "count", count: 3 },
        maxDeferMs: 10 * MIN,
        ramp: { startPerMinute: 1, factor: 2 },
        batches: [],
      }),
    };
    const cleared = planRetry(budgeted, h.nodes, [], {
      maxFailures: undefined,
      maxDeferMs: undefined,
      batches: [{ percent: 100, minDurationMs: 30 * MIN }],
    });
    if (!cleared.ok) expect.fail(cleared.message);
    expect(cleared.spec.maxFailures).toBeUndefined();
    expect(cleared.spec.maxDeferMs).toBeUndefined();
    expect(cleared.spec.ramp).toBeUndefined();
    expect(cleared.spec.batches).toEqual([{ percent: 100, minDurationMs: 30 * MIN }]);

    const ramped = planRetry(h.campaign, h.nodes, [], { ramp: { startPerMinute: 2, factor: 3 } });
    if (!ramped.ok) expect.fail(ramped.message);
    expect(ramped.spec.batches).toEqual([]);
    expect(ramped.spec.ramp).toEqual({
      startPerMinute: 2,
      factor: 3,
      maxPerMinute: 0,
      stepMs: DEFAULT_POLICY.minBatchDurationMs,
    });
  });
});
