/**
 * A gate result is stamped with when the gate was asked, not when it answered: an answer to a
 * query asked before the batch (re)settled is no evidence taken after it settled, so the batch
 * never passes on it (G1, docs/campaign-engine.md). The batch settles again while a query runs
 * when a node fails after its grace, or is lost, within the threshold. Found by the engine
 * review (R11): the runner stamped the result when the probe returned.
 */
import { describe, expect, it } from "vitest";
import { passingResults } from "../../../control/campaign/gate-rules.js";
import {
  type CampaignState,
  createCampaign,
  type Gate,
  type GateOutcome,
  planCampaign,
  resolveSpec,
} from "../../../control/campaign/index.js";
import { MemoryCampaignStore } from "../../../control/campaign-store/index.js";
import { GateRunner } from "../../../control/campaign-worker/gate-runner.js";
import { createLogger } from "../../../control/log.js";
import { ManualClock } from "../../../control/manual-clock.js";

const gates: Gate[] = [{ kind: "webhook", url: "http://a" }];
const flush = () => new Promise((r) => setTimeout(r, 0));

describe("a gate answer to a query asked before the batch (re)settled", () => {
  it("does not count as evidence taken after it settled", async () => {
    const clock = new ManualClock(1_000_000);
    const store = new MemoryCampaignStore(clock);
    const spec = resolveSpec({ targetVersion: "2.0.0", gates, gateGraceMs: 60_000 });
    const candidate = {
      id: "n1",
      labels: {},
      pool: "",
      enabled: true,
      everConnected: true,
      capabilities: ["upgrade.v1"],
      agentVersion: "1.0.0",
    };
    const { campaign, nodes } = createCampaign({
      id: "c1",
      spec,
      plan: planCampaign(spec, [candidate]),
      target: { version: "2.0.0", sequence: 2 },
      now: clock.ms,
    });
    await store.transaction((tx) =>
      tx.insertCampaign({ campaign, nodes, createdBy: "t", createdByIp: "", now: clock.now() }),
    );
    let release: (o: GateOutcome) => void = () => {};
    const askedAt: number[] = [];
    const runner = new GateRunner({
      store,
      clock,
      probe: {
        evaluate: () => {
          askedAt.push(clock.ms);
          return new Promise<GateOutcome>((r) => {
            release = r;
          });
        },
      },
      log: createLogger({ level: "silent" }),
      intervalMs: 5000,
      timeoutMs: 30_000,
      stored: () => {},
    });
    const settledAt = (t: number): CampaignState => ({
      ...campaign,
      batches: campaign.batches.map((b) => ({ ...b, settledAt: t })),
    });
    // The batch settled at t0: the gate is asked at t0.
    const t0 = clock.ms;
    runner.want("c1", settledAt(t0), t0);
    runner.tick(t0);
    expect(askedAt).toEqual([t0]);
    // 3 s later a node fails after its grace (within the threshold): the batch settles anew.
    clock.advance(3000);
    const t2 = clock.ms;
    const later = settledAt(t2);
    runner.want("c1", later, t2);
    // The answer to the query asked at t0 comes back at t2 + 2 s.
    clock.advance(2000);
    release({ status: "pass", value: "0 errors", message: "ok" });
    await flush();
    await flush();
    const results = await store.transaction((tx) => tx.readGateResults("c1", 0));
    const b = later.batches[0];
    const held = b === undefined ? undefined : passingResults(later, b, results);
    // Asked before the batch settled at t2: it must not be the evidence the batch passes on.
    expect(held).toBeUndefined();
  });
});
