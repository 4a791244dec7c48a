import { create } from "@bufbuild/protobuf";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { waitToProto } from "../../../control/admin/campaign-waits-service.js";
import type { Wait } from "../../../control/campaign/index.js";
import {
  BatchState,
  BatchStatusSchema,
} from "../../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { GetCampaignWaitsResponseSchema } from "../../../proto/gen/agentcontrol/admin/v1/campaign_waits_pb.js";
import { batchCountdown } from "../../../ui/batch-countdown.js";

const NOW = Date.parse("2026-12-07T10:00:00Z");
const MIN = 3 * 60_000;

/** Batch 0, running, its minimum duration 3 minutes, `elapsedMs` of wall time run. */
const batch = (elapsedMs: number, state = BatchState.RUNNING) =>
  create(BatchStatusSchema, {
    index: 0,
    state,
    minDuration: durationFromMs(MIN),
    elapsed: durationFromMs(elapsedMs),
  });

/** The GetCampaignWaits answer Control gives for `waits` (its own message and sentences). */
const answer = (waits: Wait[], currentBatch = 0) =>
  create(GetCampaignWaitsResponseSchema, {
    currentBatch,
    waits: waits.map((w) => waitToProto(w, NOW)),
  });

const opensAt = Date.parse("2026-12-08T02:00:00Z");
const closed: Wait = { kind: "window_closed", opensAt, timeZone: "UTC" };

describe("the dashboard's batch countdown", () => {
  it("says the window is closed and when it opens, not 'minimum duration reached', while the window is closed", () => {
    // Ten minutes of wall time, but only one counted: the window closed after it.
    const text = batchCountdown({
      batch: batch(10 * 60_000),
      waits: answer([closed, { kind: "min_duration", leftMs: 2 * 60_000 }]),
      sinceWaitsMs: 5_000,
    });
    expect(text).toBe("window closed: opens Tue 02:00 UTC; 2m0s of 3m0s left");
  });

  it("says only that the window is closed once the minimum duration is counted out", () => {
    const text = batchCountdown({
      batch: batch(10 * 60_000),
      waits: answer([closed, { kind: "to_offer", count: 2 }]),
      sinceWaitsMs: 0,
    });
    expect(text).toBe("window closed: opens Tue 02:00 UTC");
  });

  it("counts down between two reads while the batch runs in an open window", () => {
    const waits = answer([{ kind: "min_duration", leftMs: 2 * 60_000 }]);
    expect(batchCountdown({ batch: batch(60_000), waits, sinceWaitsMs: 0 })).toBe(
      "2m0s of 3m0s left",
    );
    expect(batchCountdown({ batch: batch(60_000), waits, sinceWaitsMs: 30_000 })).toBe(
      "1m30s of 3m0s left",
    );
    expect(batchCountdown({ batch: batch(60_000), waits, sinceWaitsMs: 120_000 })).toBe(
      "minimum duration reached",
    );
  });

  it("stands still while the campaign is paused, and says so", () => {
    const paused: Wait = { kind: "paused", by: "admin", at: NOW - 1000, reason: "" };
    const waits = answer([paused, { kind: "min_duration", leftMs: 90_000 }]);
    expect(batchCountdown({ batch: batch(60_000), waits, sinceWaitsMs: 60_000 })).toBe(
      "1m30s of 3m0s left (paused)",
    );
  });

  it("says nothing of a batch that is not running or not the one the waits were judged for", () => {
    const waits = answer([{ kind: "min_duration", leftMs: 60_000 }], 1);
    expect(batchCountdown({ batch: batch(0), waits, sinceWaitsMs: 0 })).toBe("");
    const passed = batch(MIN, BatchState.PASSED);
    expect(batchCountdown({ batch: passed, waits: answer([]), sinceWaitsMs: 0 })).toBe("");
    expect(batchCountdown({ batch: batch(0), waits: undefined, sinceWaitsMs: 0 })).toBe("");
  });
});
