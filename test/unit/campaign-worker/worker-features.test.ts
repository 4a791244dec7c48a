/**
 * A Control leads only the campaigns whose engine features it knows: a campaign recording a
 * feature this worker lacks (here a worker that knows no download budget, as the previous
 * release did, and a campaign started with --max-downloads) is stepped aside from: not decided,
 * nothing offered, one log line for it and the observer told; the other campaigns are led as
 * before. Memory store and manual clock.
 */
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import type { WorkerObserver } from "../../../control/campaign-worker/observer.js";
import { createCampaignWorker } from "../../../control/campaign-worker/worker.js";
import { createLogger } from "../../../control/log.js";
import { OFFLINE_AFTER, world } from "./worker-world.js";

describe("campaign worker and engine features", () => {
  it("steps aside from a campaign using a feature it does not know and leads the rest", async () => {
    // Two pools, so the one campaign's offers never wait on the other's (pool budget).
    const w = world(["n1", "n2", "n3"], (id) => (id === "n3" ? "p3" : "p1"));
    for (const id of ["n1", "n2", "n3"]) w.gateway.connect(id);
    await w.start("budget", ["n1", "n2"], { maxDownloads: 1 });
    await w.start("plain", ["n3"]);
    const lines: Record<string, unknown>[] = [];
    const destination = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split("\n").filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    const aside = new Map<string, readonly string[] | undefined>();
    const observer: WorkerObserver = {
      decided: () => {},
      leading: () => {},
      steppedAside: (campaignId, features) => aside.set(campaignId, features),
    };
    const worker = createCampaignWorker({
      store: w.store,
      gateway: w.gateway,
      clock: w.clock,
      log: createLogger({ level: "info", destination }),
      holder: "older",
      intervalMs: 5000,
      publicUrl: () => "http://control",
      offlineAfterMs: OFFLINE_AFTER,
      observer,
      engineFeatures: ["deferral", "lost_after_upgrade", "report_seq"],
    });
    for (let i = 0; i < 4; i++) {
      await worker.step();
      w.clock.advance(5000);
    }
    expect(w.gateway.sent.map((s) => s.id)).toEqual(["plain/n3/upgrade"]);
    expect(w.nodesOf("budget").map((n) => n.state)).toEqual(["waiting", "waiting"]);
    expect(aside.get("budget")).toEqual(["download_budget"]);
    expect(aside.has("plain")).toBe(false);
    const logged = lines.filter((l) => l.campaignId === "budget" && l.level === 40);
    expect(logged).toHaveLength(1);
    expect(logged[0]?.msg).toMatch(/steps aside/);
    expect(logged[0]?.unknownFeatures).toEqual(["download_budget"]);
  });

  it("leads a campaign whose features it knows (the default: every feature of this release)", async () => {
    const w = world(["n1", "n2"]);
    for (const id of ["n1", "n2"]) w.gateway.connect(id);
    await w.start("budget", ["n1", "n2"], { maxDownloads: 1 });
    const worker = w.worker();
    await worker.step();
    expect(w.gateway.sent.map((s) => s.id)).toEqual(["budget/n1/upgrade"]);
  });

  it("records the features a campaign uses when it is inserted", async () => {
    const w = world(["n1"]);
    await w.start("budget", ["n1"], { maxDownloads: 1 });
    const row = await w.store.transaction((tx) => tx.readCampaign("budget"));
    expect(row?.features).toEqual([
      "deferral",
      "download_budget",
      "lost_after_upgrade",
      "report_seq",
    ]);
  });
});
