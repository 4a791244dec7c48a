/**
 * The guards of judging a batch, each on records a store could hold even where another rule
 * would normally have acted first: the minimum sample holds a pass until an operator accepted
 * it, a yanked target holds it, a verifying node not online (or without facts) holds it, an ended campaign or a batch
 * that already breached is not judged again; and the exact words and shapes a breach or a pass
 * records (gate messages with their grace, the cancel reason, the breached and finished
 * events), and that a decision which finds nothing new writes nothing.
 */
import { describe, expect, it } from "vitest";
import { createDraft, type Draft } from "../../../control/campaign/draft.js";
import { gateLabel } from "../../../control/campaign/gates.js";
import type {
  CampaignNode,
  CampaignSpecInput,
  GateResult,
} from "../../../control/campaign/index.js";
import { judgeBreach, judgePass } from "../../../control/campaign/judge-batch.js";
import type { Harness } from "./harness.js";
import {
  batchIds,
  bringBack,
  decideWith,
  fleet,
  MIN,
  nodeOf,
  report,
  sent,
  start,
  tick,
} from "./harness.js";

/**
 * Five nodes in the first of two batches, as a store could hold them after two came back and
 * three were skipped offline: the batch still running and settled, with min canaries 3 (or
 * `spec`'s) and no rule run on it yet.
 */
function shortBatch(spec: Partial<CampaignSpecInput> = { minCanaries: 3 }): Harness {
  const h = start(fleet(20), {
    batches: [25, 100].map((percent) => ({ percent, minDurationMs: 0 })),
    disruptionBudgetPercent: 100,
    configGraceMs: 0,
    ...spec,
  });
  const ids = batchIds(h, 0);
  expect(ids).toHaveLength(5);
  h.nodes = h.nodes.map((n): CampaignNode => {
    if (n.nodeId === ids[0] || n.nodeId === ids[1]) {
      return { ...n, state: "verifying", offeredAt: 0, graceEndsAt: 0, stateChangedAt: 0 };
    }
    if (n.batch === 0) {
      return { ...n, state: "skipped", code: "node_offline", finishedAt: 0, stateChangedAt: 0 };
    }
    return n;
  });
  for (const id of ids.slice(0, 2)) bringBack(h, [id]);
  h.now = 1_000;
  return h;
}

/** A fresh draft of the harness's records at its time. */
function draftOf(h: Harness): Draft {
  return createDraft(h.campaign, h.nodes, h.facts, h.now, h.target);
}

describe("judgePass on its own", () => {
  it("holds a batch short of its minimum sample", () => {
    const d = draftOf(shortBatch());
    judgePass(d);
    expect(d.campaign.batches[0]?.state).toBe("running");
    expect(d.events.some((e) => e.kind === "batch_passed")).toBe(false);
  });

  it("passes the same short batch once an operator accepted it by resuming", () => {
    const h = shortBatch();
    h.campaign = {
      ...h.campaign,
      batches: h.campaign.batches.map((b) => (b.index === 0 ? { ...b, gatesAcceptedAt: 500 } : b)),
    };
    const d = draftOf(h);
    judgePass(d);
    expect(d.campaign.batches[0]?.state).toBe("passed");
  });

  it("passes the same batch when the campaign asks for no minimum sample", () => {
    const d = draftOf(shortBatch({}));
    judgePass(d);
    expect(d.campaign.batches[0]?.state).toBe("passed");
  });

  it("holds a settled batch while its target is yanked", () => {
    const d = draftOf(shortBatch({}));
    d.yanked = { reason: "corrupts the cache" };
    judgePass(d);
    expect(d.campaign.batches[0]?.state).toBe("running");
  });

  it("does not pass a running campaign's current batch that is not running (breached)", () => {
    const h = shortBatch({});
    h.campaign = {
      ...h.campaign,
      batches: h.campaign.batches.map((b) => (b.index === 0 ? { ...b, state: "breached" } : b)),
    };
    const d = draftOf(h);
    judgePass(d);
    expect(d.campaign.batches[0]?.state).toBe("breached");
    expect(d.events).toEqual([]);
  });

  it("holds a verifying node that has no facts (offline, nothing known: it may be gone)", () => {
    const h = shortBatch({});
    const [first] = batchIds(h, 0) as [string];
    h.facts.delete(first);
    const d = draftOf(h);
    judgePass(d);
    expect(d.campaign.batches[0]?.state).toBe("running");
  });

  it("holds a verifying node whose stream is gone, reconnecting or offline, and passes it online", () => {
    for (const liveness of [
      { online: false, offline: false },
      { online: false, offline: true },
    ]) {
      const h = shortBatch({});
      const [first] = batchIds(h, 0) as [string];
      h.facts.set(first, { ...h.facts.get(first)!, ...liveness });
      const d = draftOf(h);
      judgePass(d);
      expect(d.campaign.batches[0]?.state).toBe("running");
    }
    const d = draftOf(shortBatch({}));
    judgePass(d);
    expect(d.campaign.batches[0]?.state).toBe("passed");
  });
});

/** Ten nodes, one batch, threshold 0, concurrency 2: the first offered node refused at 5 min. */
function oneRefused(spec: Partial<CampaignSpecInput> = {}): { h: Harness; first: string } {
  const h = start(fleet(10), {
    batches: [{ percent: 100, minDurationMs: 0 }],
    failureThresholdPercent: 0,
    disruptionBudgetPercent: 100,
    concurrency: 2,
    ...spec,
  });
  tick(h);
  const first = sent(h, "upgrade")[0] as string;
  h.now = 5 * MIN;
  report(h, first, "REFUSED");
  return { h, first };
}

const WHY = "1 of 10 nodes of batch 1 failed (threshold 0 %)";

describe("judgeBreach on its own", () => {
  it("does not judge a campaign that ended, whatever its batch record says", () => {
    const { h } = oneRefused();
    tick(h);
    expect(nodeOf(h, sent(h, "upgrade")[0] as string).state).toBe("failed");
    h.campaign = { ...h.campaign, phase: "aborted", code: "aborted" };
    h.campaign = {
      ...h.campaign,
      batches: h.campaign.batches.map((b) => ({ ...b, state: "running" })),
    };
    const d = draftOf(h);
    judgeBreach(d);
    expect(d.campaign.batches[0]?.state).toBe("running");
    expect(d.events).toEqual([]);
  });

  it("does not breach again a batch that already breached (a paused campaign)", () => {
    const { h } = oneRefused({ onBreach: "pause" });
    tick(h);
    expect(h.campaign).toMatchObject({ phase: "paused", code: "batch_failed" });
    const d = draftOf(h);
    judgeBreach(d);
    expect(d.events).toEqual([]);
    expect(d.reasons).toEqual([]);
  });
});

describe("what a breach records", () => {
  it("stop: the waiting nodes are canceled with the breach's reason", () => {
    const { h } = oneRefused({ onBreach: "stop" });
    tick(h);
    const waiting = h.nodes.filter((n) => n.code === "batch_failed");
    expect(waiting).toHaveLength(8);
    for (const n of waiting)
      expect(n).toMatchObject({ state: "canceled", message: `canceled: ${WHY}` });
  });

  it("a breach over the threshold names no gate in its event", () => {
    const { h, first } = oneRefused({ onBreach: "stop" });
    const d = tick(h);
    expect(d.events.find((e) => e.kind === "breached")).toStrictEqual({
      kind: "breached",
      batch: 0,
      failed: 1,
      offerable: 10,
      stoppedByNodeId: first,
    });
  });
});

const GATES = [{ kind: "webhook" as const, url: "http://hook" }];

/** Two nodes, one batch, a webhook gate with 90 s of grace; the batch settles at 10 s. */
function gated(): Harness {
  const h = start(fleet(2), {
    disruptionBudgetPercent: 100,
    configGraceMs: 0,
    gates: GATES,
    gateGraceMs: 90_000,
    onBreach: "pause",
    batches: [{ percent: 100, minDurationMs: 0 }],
  });
  decideWith(h, []);
  h.now = 10_000;
  bringBack(h, sent(h, "upgrade"));
  decideWith(h, []);
  return h;
}

const LABEL = gateLabel(GATES, 0);

/** Gate 1's answer for batch 1 (`more` overrides any field). */
function gateAnswer(
  status: GateResult["status"],
  at: number,
  value: string,
  message: string,
  more: Partial<GateResult> = {},
): GateResult {
  return { batch: 0, gate: 0, status, at, value, message, ...more };
}

describe("a gate's words", () => {
  it("a failing gate: its message and value", () => {
    const h = gated();
    h.now = 20_000;
    const fail = gateAnswer("fail", 20_000, "HTTP 503", "the hook said no");
    const d = decideWith(h, [fail]);
    expect(h.campaign.message).toBe(
      `${LABEL} of batch 1 failed: the hook said no (value HTTP 503)`,
    );
    expect(d.events.find((e) => e.kind === "breached")).toMatchObject({ gate: 0 });
  });

  it("an unreachable gate: how long, against its grace in seconds", () => {
    const h = gated();
    h.now = 110_000;
    const away = gateAnswer("unreachable", 110_000, "", "connection refused", {
      unreachableSince: 15_000,
    });
    decideWith(h, [away]);
    expect(h.campaign.message).toBe(
      `${LABEL} of batch 1 failed: unreachable for 95 s (grace 90 s): connection refused`,
    );
  });

  it("a holding gate: the pass event carries the gate's label", () => {
    const h = gated();
    h.now = 20_000;
    const pass = gateAnswer("pass", 20_000, "HTTP 200", "ok");
    const d = decideWith(h, [pass]);
    expect(h.campaign.phase).toBe("completed");
    expect(d.events).toContainEqual({
      kind: "gate",
      batch: 0,
      gate: 0,
      label: LABEL,
      status: "pass",
      value: "HTTP 200",
      message: "ok",
    });
  });
});

describe("a pass's records", () => {
  it("an empty batch of a gated campaign passes at once, with no gate result of its own", () => {
    // One node: batch 1 holds it, batch 2 is empty.
    const h = start(fleet(1), {
      disruptionBudgetPercent: 100,
      configGraceMs: 0,
      gates: GATES,
      batches: [50, 100].map((percent) => ({ percent, minDurationMs: 0 })),
    });
    expect(batchIds(h, 1)).toEqual([]);
    decideWith(h, []);
    h.now = 10_000;
    bringBack(h, sent(h, "upgrade"));
    decideWith(h, []);
    h.now = 20_000;
    const pass = gateAnswer("pass", 20_000, "HTTP 200", "ok");
    decideWith(h, [pass]);
    expect(h.campaign.batches.map((b) => b.state)).toEqual(["passed", "passed"]);
    expect(h.campaign.phase).toBe("completed");
    expect(h.campaign.batches[1]).not.toHaveProperty("gateEvidence");
  });

  it("a campaign without gates records no gate evidence field at all", () => {
    const h = start(fleet(2), {
      batches: [{ percent: 100, minDurationMs: 0 }],
      disruptionBudgetPercent: 100,
      configGraceMs: 0,
    });
    tick(h);
    bringBack(h, batchIds(h, 0));
    const d = tick(h);
    expect(h.campaign.batches[0]?.state).toBe("passed");
    expect(h.campaign.batches[0]).not.toHaveProperty("gateEvidence");
    expect(d.events.find((e) => e.kind === "finished")).toStrictEqual({
      kind: "finished",
      phase: "completed",
    });
  });

  it("a decision that finds nothing new while a batch waits out its minimum writes nothing", () => {
    const h = start(fleet(2), {
      batches: [{ percent: 100, minDurationMs: 10 * MIN }],
      disruptionBudgetPercent: 100,
      configGraceMs: 0,
    });
    tick(h);
    bringBack(h, batchIds(h, 0));
    h.now = MIN;
    tick(h);
    expect(h.campaign.batches[0]?.settledAt).toBeDefined();
    h.now = 2 * MIN;
    const d = tick(h);
    expect(d.changes.campaign).toBeUndefined();
    expect(d.changes.nodes).toEqual([]);
    expect(d.judged).toBeDefined();
  });
});
