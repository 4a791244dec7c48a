/**
 * The memory store's re-send query (`unackedOperations`, the worker's periodic delivery pass)
 * costs linear work in its rows, counted, never timed: a campaign of N nodes with every node
 * offered and unacknowledged, and one rolled back and finished, at 2,000 and 8,000 nodes. Each
 * row's node record is found by id, not by scanning its campaign's nodes (a scan per row grew
 * 16× for 4× the nodes).
 */
import { describe, expect, it } from "vitest";
import { engineWorld } from "../../../agent-sim/bench/engine-world.js";
import {
  type CampaignNode,
  createCampaign,
  operationId,
  planCampaign,
  resolveSpec,
} from "../../../control/campaign/index.js";
import { countScansAsync } from "../campaign/scan-count.js";

const N = 2000;
const ALLOWED = 4 * (Math.log2(4 * N) / Math.log2(N)) * 1.1;

/** Seeds campaign `id` over every node, each as `shape` makes it, with its outbox row of `kind`. */
async function seed(
  w: Awaited<ReturnType<typeof engineWorld>>,
  id: string,
  at: number,
  kind: "upgrade" | "rollback",
  shape: (n: CampaignNode) => CampaignNode,
  finishedAt?: number,
) {
  const spec = resolveSpec({ targetVersion: "2.0.0", selector: { pools: ["prod"] } });
  const candidates = w.ids.map((nodeId) => ({
    id: nodeId,
    labels: {},
    pool: "prod",
    enabled: true,
    everConnected: true,
    capabilities: ["upgrade.v1"],
    agentVersion: "1.0.0",
  }));
  const created = createCampaign({
    id,
    spec,
    plan: planCampaign(spec, candidates, 100),
    target: { version: "2.0.0", sequence: 2 },
    now: at,
  });
  const campaign =
    finishedAt === undefined
      ? created.campaign
      : { ...created.campaign, phase: "rolled_back" as const, finishedAt };
  await w.store.transaction((tx) =>
    tx.insertCampaign({
      campaign,
      nodes: created.nodes.map(shape),
      createdBy: "test",
      createdByIp: "",
      now: new Date(at),
    }),
  );
  for (const nodeId of w.ids) {
    const opId = operationId(id, nodeId, kind);
    w.store.tables.operations.set(opId, {
      id: opId,
      campaignId: id,
      nodeId,
      kind,
      payload: new Uint8Array([1]),
      createdAt: at,
      seq: w.store.tables.nextSeq(),
      failedAt: null,
      failure: null,
      ackedAt: null,
      report: null,
      lastSentAt: null,
      sendCount: 0,
    });
  }
}

async function resendCost(n: number): Promise<number> {
  const w = await engineWorld(n);
  const now = w.clock.now().getTime();
  await seed(
    w,
    "c0",
    now - 3_600_000,
    "rollback",
    (x) => ({ ...x, state: "rolling_back", previousVersion: "1.0.0" }),
    now - 1_800_000,
  );
  await seed(w, "c1", now - 60_000, "upgrade", (x) => ({
    ...x,
    state: "offered",
    offeredAt: now - 60_000,
  }));
  const { result, visits } = await countScansAsync(() =>
    w.store.unackedOperations({ now: new Date(now) }),
  );
  expect(result.length).toBeGreaterThanOrEqual(n);
  return visits;
}

describe("the memory store's re-send query in the size of the fleet (counted)", () => {
  it("costs at most n log n more at 8,000 nodes than at 2,000", async () => {
    const small = await resendCost(N);
    const large = await resendCost(4 * N);
    expect(large / small).toBeLessThan(ALLOWED);
  }, 120_000);
});
