/**
 * Crash safety: Control runs as a real child process (`node --import tsx control/main.ts`,
 * as `npx tsx` does) on a real PostgreSQL; it is SIGKILLed at random points of two running
 * campaigns and started again each time. Both campaigns must end exactly as they do without
 * kills, and no simulated agent may apply an operation twice.
 *
 * The outcome without kills is deterministic by construction:
 * - campaign A (200 agents, 3 of them refuse, all in the 140-node last batch, threshold 5 %)
 *   completes with exactly those 3 failed (`rejected`) and the other 197 succeeded;
 * - campaign B (100 agents that fail to apply the release) breaches its 5-node canary batch,
 *   rolls it back and ends `rolled_back`/`batch_failed`; no node outside that batch is touched.
 *
 * CAMPAIGN_CRASH_KILLS sets the number of kills: `npm test` (and CI) runs 5, under a minute on
 * two cores; 20 is the full mode, ~2–3 minutes. Each restart costs ~3 s of TypeScript loading plus the agents'
 * reconnection, so the campaigns are paced (concurrency) to still be running at the last kill.
 */
import type { Server } from "node:http";
import type { DescService } from "@bufbuild/protobuf";
import type { Client } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Fleet, startFleet } from "../../agent-sim/index.js";
import {
  BatchState,
  type Campaign,
  CampaignPhase,
  CampaignService,
  NodeState,
} from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { NodeService } from "../../proto/gen/agentcontrol/admin/v1/node_pb.js";
import {
  artifactServer,
  type ControlChild,
  registerServedRelease,
  startControlChild,
} from "../helpers/process-fixtures.js";
import { makeKeys } from "../helpers/releases.js";
import { isDone, NEW, OLD, quickSpec } from "./campaign-fixture.js";

const KILLS = Number(process.env.CAMPAIGN_CRASH_KILLS ?? 5);
const TOKEN = "crash-test-operator-token-0123456789";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("Control killed with SIGKILL during running campaigns", () => {
  let artifacts: { server: Server; base: string };
  let control: ControlChild;
  const fleets: Fleet[] = [];
  const client = <S extends DescService>(service: S): Client<S> => control.client(service);

  beforeAll(async () => {
    artifacts = await artifactServer();
    const [key] = await makeKeys(1);
    if (!key) throw new Error("no key");
    control = await startControlChild({
      database: "crash",
      dirPrefix: "agent-control-crash-",
      adminToken: TOKEN,
      pins: [key.pin],
      timeouts: { reconnectSeconds: 120, offlineAfterSeconds: 10 },
      readyTimeoutMs: 30_000,
    });
    await registerServedRelease(control, {
      version: NEW,
      sequence: 20,
      key,
      urlBase: artifacts.base,
    });
    const common = {
      server: control.agentAddress,
      pins: [key.pin],
      restartMs: [150, 400] as const,
      backoff: { baseMs: 100, capMs: 800, resetAfterMs: 1000 },
    };
    for (const [prefix, count, failVersions] of [
      ["a", 200, []],
      ["b", 100, [NEW]],
    ] as const) {
      const joinToken = (await client(NodeService).createJoinToken({})).secret;
      const fleet = await startFleet({
        ...common,
        joinToken,
        count,
        idPrefix: prefix,
        labels: { group: prefix },
        failVersions,
      });
      await fleet.waitUntil((f) => f.welcomedCount() === count, 30_000, `fleet ${prefix} welcomed`);
      fleets.push(fleet);
    }
  }, 120_000);

  afterAll(async () => {
    await Promise.all(fleets.map((f) => f.stop()));
    await control?.stop();
    await new Promise((resolve) => artifacts?.server.close(resolve));
  });

  it(`ends every campaign as without kills after ${KILLS} SIGKILLs, applying no operation twice`, async () => {
    const [a, b] = fleets as [Fleet, Fleet];
    const campaigns: Client<typeof CampaignService> = client(CampaignService);
    const specA = quickSpec(NEW, [5, 30, 100], {
      selector: { labels: { group: "a" } },
      concurrency: KILLS >= 10 ? 3 : 6,
      disruptionBudgetPercent: 100,
    });
    const plan = await campaigns.planCampaign({ spec: specA });
    const refusers = plan.batches[2]!.nodeIds.slice(0, 3);
    for (const nodeId of refusers) a.agent(nodeId).setBehaviour({ upgrade: "refuse" });
    const idA = (await campaigns.startCampaign({ spec: specA })).campaign?.id ?? "";
    const idB =
      (
        await campaigns.startCampaign({
          spec: quickSpec(NEW, [5, 100], {
            selector: { labels: { group: "b" } },
            concurrency: 2,
            disruptionBudgetPercent: 100,
          }),
        })
      ).campaign?.id ?? "";

    const get = async (id: string): Promise<Campaign | undefined> =>
      (await campaigns.getCampaign({ id, summaryOnly: true })).campaign;
    let kills = 0;
    while (kills < KILLS) {
      await sleep(200 + Math.floor(Math.random() * 1200));
      if (isDone(await get(idA))) break;
      await control.kill();
      kills++;
      const t0 = Date.now();
      await control.restart();
      if (process.env.CRASH_DEBUG)
        console.log(
          `restart ${kills}: ${Date.now() - t0} ms`,
          JSON.stringify((await get(idA))?.counts),
        );
    }
    expect(kills).toBe(KILLS);

    const t1 = Date.now();
    // About 20 s on a quiet machine; a whole suite beside other work has taken past 90 s.
    const deadline = Date.now() + 240_000;
    while (!(isDone(await get(idA)) && isDone(await get(idB)))) {
      if (Date.now() > deadline) throw new Error("campaigns did not finish after the kills");
      await sleep(200);
    }
    if (process.env.CRASH_DEBUG) console.log(`finish after kills: ${Date.now() - t1} ms`);
    const doneA = (await campaigns.getCampaign({ id: idA })) as {
      campaign: Campaign;
      nodes: { nodeId: string; state: NodeState; code: string }[];
    };
    const statesA = doneA.nodes.map((n) => `${NodeState[n.state]}/${n.code}`);
    const counts = new Map<string, number>();
    for (const s of statesA) counts.set(s, (counts.get(s) ?? 0) + 1);
    const tally = [...counts];
    expect(tally.sort()).toEqual([
      ["FAILED/rejected", 3],
      ["SUCCEEDED/", 197],
    ]);
    expect(doneA.campaign.phase).toBe(CampaignPhase.COMPLETED);
    const failed = doneA.nodes.filter((n) => n.state === NodeState.FAILED);
    expect(failed.map((n) => n.nodeId).sort()).toEqual([...refusers].sort());
    for (const n of failed) expect(n.code).toBe("rejected");
    expect(doneA.nodes.filter((n) => n.state === NodeState.SUCCEEDED)).toHaveLength(197);
    for (const agent of a.agents) {
      expect(agent.version).toBe(refusers.includes(agent.nodeId) ? OLD : NEW);
    }

    const doneB = await campaigns.getCampaign({ id: idB });
    expect(doneB.campaign?.phase).toBe(CampaignPhase.ROLLED_BACK);
    expect(doneB.campaign?.code).toBe("batch_failed");
    expect(doneB.campaign?.batches.map((x) => x.state)).toEqual([
      BatchState.ROLLED_BACK,
      BatchState.CANCELED,
    ]);
    const canaries = new Set(doneB.nodes.filter((n) => n.batch === 0).map((n) => n.nodeId));
    for (const agent of b.agents) {
      expect(agent.version).toBe(OLD);
      if (!canaries.has(agent.nodeId)) expect(Object.keys(agent.state.handled)).toEqual([]);
    }
    for (const fleet of fleets) expect(fleet.stats().duplicateApplications).toBe(0);
  }, 600_000);
});
