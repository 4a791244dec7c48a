/**
 * The engine features a campaign uses (`engine-features.ts`): one function of its spec, a closed
 * list, and the test a Control makes of a campaign's recorded list against the features it knows.
 */
import { describe, expect, it } from "vitest";
import {
  campaignFeatures,
  ENGINE_FEATURES,
  resolveSpec,
  unknownFeatures,
} from "../../../control/campaign/index.js";

const spec = (extra: Parameters<typeof resolveSpec>[0] extends infer T ? Partial<T> : never) =>
  resolveSpec({ targetVersion: "2.0.0", batches: [{ percent: 100, minDurationMs: 0 }], ...extra });

describe("engine features", () => {
  it("a campaign without a download budget uses deferral, lost_after_upgrade and report_seq", () => {
    expect(campaignFeatures(spec({}))).toEqual(["deferral", "lost_after_upgrade", "report_seq"]);
  });

  it("a campaign with --max-downloads uses download_budget too, in the list's order", () => {
    expect(campaignFeatures(spec({ maxDownloads: 2 }))).toEqual([
      "deferral",
      "download_budget",
      "lost_after_upgrade",
      "report_seq",
    ]);
  });

  it("every feature a campaign may use is one of the closed list", () => {
    for (const f of campaignFeatures(spec({ maxDownloads: 2, maxDeferMs: 0 })))
      expect(ENGINE_FEATURES).toContain(f);
  });

  it("names the recorded features a Control does not know, each once, in order", () => {
    expect(unknownFeatures(["deferral", "report_seq"])).toEqual([]);
    expect(unknownFeatures([])).toEqual([]);
    expect(unknownFeatures(["deferral", "teleport", "teleport", "abacus"])).toEqual([
      "abacus",
      "teleport",
    ]);
    // A Control that knows fewer (the previous release knew none of them).
    expect(unknownFeatures(["deferral", "download_budget"], ["deferral"])).toEqual([
      "download_budget",
    ]);
  });
});
