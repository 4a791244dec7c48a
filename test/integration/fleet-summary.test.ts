/**
 * The fleet summary and the campaign page's windows and gates against a real Control (real
 * PostgreSQL, admin API over HTTP) with simulated agents on real streams: nodes counted by
 * version and pool in one read, a desired version whose convergence a failure halts (with
 * its failures and why its nodes are behind), a campaign's closed window with its next
 * opening, and a gate with its latest result and grace.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeIdOf } from "../../agent-sim/index.js";
import { CampaignWaitsService } from "../../proto/gen/agentcontrol/admin/v1/campaign_waits_pb.js";
import {
  FleetService,
  type GetFleetSummaryResponse,
} from "../../proto/gen/agentcontrol/admin/v1/fleet_pb.js";
import { DesiredVersionService } from "../../proto/gen/agentcontrol/admin/v1/rollout_pb.js";
import { type CampaignFixture, campaignFixture, NEW, OLD, quickSpec } from "./campaign-fixture.js";

const DAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];

async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > deadline)
      throw new Error(
        `${what}: last ${JSON.stringify(v, (_, x) => (typeof x === "bigint" ? String(x) : x))}`,
      );
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("the fleet summary, and a campaign's windows and gates", { timeout: 150_000 }, () => {
  let fx: CampaignFixture;
  const failing = nodeIdOf("conv", 2);

  beforeAll(async () => {
    fx = await campaignFixture({ worker: { intervalMs: 200, convergenceIntervalMs: 300 } });
    await fx.register(NEW);
    await Promise.all([
      fx.fleet({
        count: 3,
        idPrefix: "conv",
        labels: { pool: "conv" },
        behaviours: { [failing]: { upgrade: "fail" } },
      }),
      fx.fleet({ count: 2, idPrefix: "gate", labels: { pool: "gate" } }),
      fx.fleet({ count: 2, idPrefix: "win", labels: { pool: "win" } }),
    ]);
  }, 120_000);
  afterAll(async () => {
    await fx?.stop();
  });

  it("counts nodes by version and pool, and shows a halted convergence with its failures", async () => {
    const fleet = fx.tc.client(FleetService, fx.tc.viewerToken);
    const first = await fleet.getFleetSummary({});
    expect(first).toMatchObject({ nodes: 7, online: 7, desired: [] });
    expect(first.versions.map((v) => [v.version, v.nodes, v.online])).toEqual([[OLD, 7, 7]]);
    expect(first.pools.map((p) => [p.pool, p.nodes, p.online, p.disabled])).toEqual([
      ["conv", 3, 3, 0],
      ["gate", 2, 2, 0],
      ["win", 2, 2, 0],
    ]);

    await fx.tc.client(DesiredVersionService).setDesiredVersion({
      targetVersion: NEW,
      selector: { pools: ["conv"] },
      maxFailures: 1,
      disruptionBudgetPercent: 100,
      reason: "fleet summary",
    });
    const halted = await until(
      () => fleet.getFleetSummary({}),
      (s: GetFleetSummaryResponse) => s.desired[0]?.state === "halted",
      "convergence halted",
    );
    const [d] = halted.desired;
    expect(d?.desired).toMatchObject({ targetVersion: NEW, nodes: 3, converged: 2 });
    expect(d?.behind).toBe(1);
    expect(d?.failedNodeIds).toEqual([failing]);
    expect(d?.reasons.map((r) => [r.code, r.nodes, r.nodeIds])).toEqual([["halted", 1, [failing]]]);
    expect(d?.reasons[0]?.text).toBe(
      "convergence halted: not offered until the desired version is set again",
    );
    expect(d?.desired?.haltedReason).toMatch(
      /^convergence to 2\.0\.0 halted: 1 node\(s\) failed \(conv-00003\), the limit is 1$/,
    );
    expect(halted.versions.map((v) => [v.version, v.nodes])).toEqual([
      [OLD, 5],
      [NEW, 2],
    ]);
  });

  it("answers a closed window with its next opening, and a gate with its latest result and grace", async () => {
    const waits = fx.tc.client(CampaignWaitsService, fx.tc.viewerToken);
    // A window on the day after tomorrow (UTC) is closed now, whatever the time of day.
    const day = (new Date().getUTCDay() + 2) % 7;
    const win = await fx.campaigns.startCampaign({
      spec: quickSpec(NEW, [5, 100], {
        selector: { pools: ["win"] },
        windows: [`${DAYS[day]} 02:00-03:00 UTC`],
      }),
    });
    const w = await waits.getCampaignWaits({ id: win.campaign?.id ?? "" });
    expect(w.window?.open).toBe(false);
    expect(w.window?.closesAt).toBeUndefined();
    const opens = new Date(Number(w.window?.nextOpensAt?.seconds ?? 0n) * 1000);
    expect([opens.getUTCDay(), opens.getUTCHours(), opens.getUTCMinutes()]).toEqual([day, 2, 0]);
    expect(opens.getTime() - Date.now()).toBeLessThan(3 * 86_400_000);
    expect(w.gates).toEqual([]);

    // Nothing listens on port 1: the gate is unreachable, within its hour of grace.
    const gated = await fx.campaigns.startCampaign({
      spec: quickSpec(NEW, [5, 100], {
        selector: { pools: ["gate"] },
        gates: ["prometheus http://127.0.0.1:1 up"],
        gateGrace: { seconds: 3600n, nanos: 0 },
      }),
    });
    const id = gated.campaign?.id ?? "";
    const g = await until(
      () => waits.getCampaignWaits({ id }),
      (r) => r.gates[0]?.status === "unreachable",
      "the gate judged unreachable",
    );
    expect(g.window).toBeUndefined();
    expect(g.gates).toHaveLength(1);
    expect(g.gates[0]).toMatchObject({
      index: 0,
      text: "prometheus http://127.0.0.1:1 up",
      status: "unreachable",
      failing: false,
      grace: { seconds: 3600n },
    });
    expect(g.gates[0]?.unreachableSince).toBeDefined();
    expect(g.gates[0]?.at).toBeDefined();
  });
});
