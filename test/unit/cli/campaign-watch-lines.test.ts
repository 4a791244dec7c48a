import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import {
  lineWorthy,
  PROGRESS_EVERY_MS,
  pendingDueMs,
  type Written,
} from "../../../cli/commands/campaign-watch-lines.js";
import {
  BatchState,
  type Campaign,
  CampaignPhase,
  CampaignSchema,
  NodeState,
} from "../../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";

function at(
  succeeded: number,
  batch2 = BatchState.PENDING,
  phase = CampaignPhase.RUNNING,
): Campaign {
  return create(CampaignSchema, {
    id: "c1",
    phase,
    currentBatch: batch2 === BatchState.PENDING ? 0 : 1,
    counts: [{ state: NodeState.SUCCEEDED, count: succeeded }],
    batches: [
      { index: 0, state: batch2 === BatchState.PENDING ? BatchState.RUNNING : BatchState.PASSED },
      { index: 1, state: batch2 },
    ],
  });
}

describe("when watch writes a line off a terminal", () => {
  const first = lineWorthy(undefined, at(1), 0) as Written;

  it("writes the first update", () => {
    expect(first).toBeDefined();
  });

  it("writes nothing when only node counts moved within a second", () => {
    expect(lineWorthy(first, at(2), PROGRESS_EVERY_MS - 1)).toBeUndefined();
  });

  it("writes a progress line once a second passed and the counts moved", () => {
    expect(PROGRESS_EVERY_MS).toBe(1_000);
    expect(lineWorthy(first, at(2), PROGRESS_EVERY_MS)).toBeDefined();
    expect(lineWorthy(first, at(1), 10 * PROGRESS_EVERY_MS)).toBeUndefined();
  });

  it("holds back moved counts until a second after the last line, then writes them", () => {
    expect(pendingDueMs(first, at(2))).toBe(PROGRESS_EVERY_MS);
    expect(pendingDueMs(first, at(1))).toBeUndefined();
    expect(pendingDueMs(first, at(1, BatchState.RUNNING))).toBe(0);
  });

  it("writes every batch state change and every phase change at once", () => {
    expect(lineWorthy(first, at(1, BatchState.RUNNING), 1)).toBeDefined();
    expect(lineWorthy(first, at(1, BatchState.PENDING, CampaignPhase.PAUSED), 1)).toBeDefined();
  });

  it("writes the campaign's finish (every node final) though its phase was final before", () => {
    const ended = at(1, BatchState.PASSED, CampaignPhase.COMPLETED);
    const written = lineWorthy(undefined, ended, 0) as Written;
    const finished = at(1, BatchState.PASSED, CampaignPhase.COMPLETED);
    finished.finishedAt = { $typeName: "google.protobuf.Timestamp", seconds: 1n, nanos: 0 };
    expect(lineWorthy(written, finished, 1)).toBeDefined();
  });
});
