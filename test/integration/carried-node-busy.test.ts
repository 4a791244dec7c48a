/**
 * A deferring node carried over to the next batch (`control/campaign/deferral.ts`) is stored in
 * its new batch on both adapters: read back there, and busy as a node of the current batch while
 * it waits and once it ended there (that batch may still roll back). The SQL store keeps a
 * node's batch in a column beside its record, which the busy rule and the per-batch counts read.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  type CampaignNode,
  createCampaign,
  planCampaign,
  resolveSpec,
} from "../../control/campaign/index.js";
import { type Fixture, memoryAdapter, sqlAdapter, T0 } from "./fleet-store-fixtures.js";

const SPEC = resolveSpec({
  targetVersion: "2.0.0",
  selector: { pools: ["p"] },
  batches: [
    { percent: 50, minDurationMs: 0 },
    { percent: 100, minDurationMs: 0 },
  ],
});

describe.each([sqlAdapter(), memoryAdapter()])("the $name stores", (adapter) => {
  let fx: Fixture;
  beforeAll(() => adapter.open(), 60_000);
  afterAll(() => adapter.close());
  beforeEach(async () => {
    fx = await adapter.fresh();
  });

  it("keep a carried node in its new batch, busy there for other starts", async () => {
    const ids = ["a", "b", "c", "d"];
    for (const id of ids) await fx.putNode({ id });
    const plan = planCampaign(
      SPEC,
      ids.map((id) => ({
        id,
        labels: {},
        pool: "p",
        enabled: true,
        everConnected: true,
        capabilities: ["upgrade.v1"],
        agentVersion: "1.0.0",
      })),
      50,
    );
    const c = createCampaign({
      id: "c1",
      spec: SPEC,
      plan,
      target: { version: "2.0.0", sequence: 2 },
      now: T0,
    });
    await fx.campaigns.transaction((tx) =>
      tx.insertCampaign({ ...c, createdBy: "tester", createdByIp: "", now: new Date(T0) }),
    );
    const [upgraded, deferring] = c.nodes.filter((n) => n.batch === 0) as [
      CampaignNode,
      CampaignNode,
    ];
    // Batch 1 passed on the node that upgraded; the deferring one was carried to batch 2.
    await fx.campaigns.transaction((tx) =>
      tx.writeDecision({
        campaignId: "c1",
        version: 1,
        campaign: {
          ...c.campaign,
          currentBatch: 1,
          batches: c.campaign.batches.map((b) =>
            b.index === 0
              ? { ...b, state: "passed", nodeCount: 1, startedAt: T0, endedAt: T0 + 1 }
              : { ...b, state: "running", nodeCount: 3, startedAt: T0 + 1 },
          ),
        },
        nodes: [
          { ...upgraded, state: "succeeded", finishedAt: T0 + 1, stateChangedAt: T0 + 1 },
          { ...deferring, batch: 1, carriedFrom: 0, deferredAt: T0, deferRetryAt: T0 + 60_000 },
        ],
        operations: [],
        appliedCommands: [],
        audits: [],
        now: new Date(T0 + 1),
      }),
    );
    const nodes = await fx.campaigns.transaction((tx) => tx.readNodes("c1"));
    expect(nodes.find((n) => n.nodeId === deferring.nodeId)).toMatchObject({
      batch: 1,
      carriedFrom: 0,
      state: "waiting",
    });
    const busyOf = async (id: string) =>
      (await fx.fleet.transaction((tx) => tx.readFleet())).find((r) => r.id === id);
    expect(await busyOf(deferring.nodeId)).toMatchObject({ busy: true, busyIn: "c1" });
    expect((await busyOf(upgraded.nodeId))?.busy).toBe(false);
    // Past its max defer it ends skipped there: a final node of the running current batch,
    // still busy (that batch may yet roll back), as every node the batch holds.
    const carried = nodes.find((n) => n.nodeId === deferring.nodeId) as CampaignNode;
    await fx.campaigns.transaction((tx) =>
      tx.writeDecision({
        campaignId: "c1",
        version: 2,
        campaign: undefined,
        nodes: [
          {
            ...carried,
            state: "skipped",
            code: "deferred",
            finishedAt: T0 + 2,
            stateChangedAt: T0 + 2,
          },
        ],
        operations: [],
        appliedCommands: [],
        audits: [],
        now: new Date(T0 + 2),
      }),
    );
    expect(await busyOf(deferring.nodeId)).toMatchObject({ busy: true, busyIn: "c1" });
  });
});
