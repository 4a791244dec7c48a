/**
 * The worker's observer (Control's metrics hook): told how each decision ended, with its
 * committed events, and whether the worker leads. Memory store, manual clock, no agents.
 */
import { describe, expect, it } from "vitest";
import {
  type CampaignEvent,
  createCampaign,
  planCampaign,
  resolveSpec,
} from "../../../control/campaign/index.js";
import { MemoryCampaignStore, WORKER_LEASE } from "../../../control/campaign-store/index.js";
import type { DecisionResult } from "../../../control/campaign-worker/observer.js";
import { createCampaignWorker } from "../../../control/campaign-worker/worker.js";
import { createLogger } from "../../../control/log.js";
import { ManualClock } from "../../../control/manual-clock.js";

const NEW = "2.0.0";

async function world() {
  const clock = new ManualClock(1_000_000);
  const store = new MemoryCampaignStore(clock);
  store.tables.releases.set(NEW, {
    version: NEW,
    sequence: 2,
    envelope: { payloadType: "t", payload: new Uint8Array(), signatures: [] },
    artifacts: [{ platform: "linux-amd64", sha256: "0".repeat(64), size: 1, url: "" }],
  });
  store.putNode({
    id: "n1",
    pool: "",
    boot_id: "b0",
    agent_version: "1.0.0",
    capabilities: ["upgrade.v1"],
    platform: "linux-amd64",
    enabled: true,
    last_seen: clock.now(),
  });
  const spec = resolveSpec({ targetVersion: NEW, batches: [{ percent: 100, minDurationMs: 0 }] });
  const plan = planCampaign(spec, [
    {
      id: "n1",
      labels: {},
      pool: "",
      enabled: true,
      everConnected: true,
      capabilities: ["upgrade.v1"],
      agentVersion: "1.0.0",
    },
  ]);
  const { campaign, nodes } = createCampaign({
    id: "c1",
    spec,
    plan,
    target: { version: NEW, sequence: 2 },
    now: clock.ms,
  });
  await store.transaction((tx) =>
    tx.insertCampaign({ campaign, nodes, createdBy: "t", createdByIp: "", now: clock.now() }),
  );
  const decided: { result: DecisionResult; seconds: number; events: readonly CampaignEvent[] }[] =
    [];
  const leading: boolean[] = [];
  const worker = createCampaignWorker({
    store,
    gateway: { send: () => false, connected: () => undefined, subscribe: () => () => {} },
    clock,
    log: createLogger({ level: "silent" }),
    holder: "w1",
    intervalMs: 5000,
    publicUrl: () => "http://control",
    offlineAfterMs: 60_000,
    observer: {
      decided: (result, seconds, events) => decided.push({ result, seconds, events }),
      leading: (now) => leading.push(now),
    },
  });
  return { clock, store, worker, decided, leading };
}

describe("the campaign worker's observer", () => {
  it("is told of each committed decision with its events and duration, and that the worker leads", async () => {
    const w = await world();
    await w.worker.step();
    expect(w.leading).toEqual([true]);
    expect(w.decided.map((d) => d.result)).toEqual(["committed"]);
    w.store.tables.addCommand({
      campaignId: "c1",
      kind: "abort",
      rollback: false,
      reason: "enough",
      actor: "t",
      actor_ip: "",
    });
    w.worker.wake("c1");
    w.clock.advance(100);
    await w.worker.step();
    expect(w.decided.map((d) => d.result)).toEqual(["committed", "committed"]);
    const events = w.decided[1]?.events ?? [];
    expect(events).toContainEqual({ kind: "finished", phase: "aborted" });
    for (const d of w.decided) {
      expect(d.seconds).toBeGreaterThanOrEqual(0);
      expect(d.seconds).toBeLessThan(10);
    }
    expect(w.leading).toEqual([true, true]);
  });

  it("is told of a decision refused for a lost lease, and that the worker no longer leads", async () => {
    const w = await world();
    await w.worker.step();
    const lease = w.store.tables.leases.get(WORKER_LEASE);
    if (lease) lease.holder = "someone-else";
    w.worker.wake("c1");
    w.clock.advance(100);
    await w.worker.step();
    expect(w.decided.map((d) => d.result)).toEqual(["committed", "not_leader"]);
    expect(w.leading).toEqual([true, false]);
  });
});
