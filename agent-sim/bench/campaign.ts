/**
 * Campaign scenarios, run on the fleet the memory scenario left connected to Control:
 * one campaign over every node (batches 25 % → 100 %, zero minimum durations and config
 * grace, whole batch in flight, instant simulated restarts) gives the fan-out of its first batch (2,500 of
 * 10,000 nodes) with Control's event-loop delay meanwhile, the rollout rate, and the
 * ack-to-commit latency of the ObservedState reports written while it runs.
 */
import { create } from "@bufbuild/protobuf";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import {
  CampaignPhase,
  CampaignService,
  CampaignSpecSchema,
} from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import type { BareFanout } from "./bare-fanout.js";
import { ackLatencies, installAckProbe, removeAckProbe } from "./campaign-acks.js";
import { type BenchRelease, registerRelease } from "./campaign-release.js";
import type { BenchControl } from "./control.js";
import type { DbBaseline } from "./db-baseline.js";
import { type SimProcess, sleep } from "./processes.js";
import type { BenchRow } from "./rows.js";
import type { SimMarks } from "./sim-runner.js";
import { percentile, ratio } from "./stats.js";
import type { Target } from "./target.js";

/** Control config the campaign scenarios need (zero minimum durations, big first batch). */
export const CAMPAIGN_POLICY = { minBatchDurationSeconds: 0, firstBatchMaxPercent: 100 };

/** The fan-out rows' scenarios (the baseline is set on them by {@link withFanoutBaseline}). */
const FANOUT = "fan-out: StartCampaign answered → last offer of the first batch received";
const FANOUT_ELD = "fan-out: Control event-loop delay p99 (max) meanwhile";

/** Inputs of {@link runCampaignScenarios}. */
export interface CampaignContext {
  readonly control: BenchControl;
  readonly target: Target;
  readonly sims: readonly SimProcess[];
  readonly fleet: number;
  readonly release: BenchRelease;
  readonly databaseUrl: string;
  readonly db: DbBaseline;
  readonly say: (text: string) => void;
}

/** What the campaign showed. */
export interface CampaignResult {
  readonly rows: BenchRow[];
  readonly raw: Record<string, unknown>;
}

function row(
  partial: Partial<BenchRow> & Pick<BenchRow, "scenario" | "n" | "unit" | "goal">,
): BenchRow {
  return {
    project: Number.NaN,
    baseline: Number.NaN,
    baselineName: "",
    ratio: Number.NaN,
    met: undefined,
    ...partial,
  };
}

/** The campaign rows, each pending with `reason` (quick mode, or no campaign service). */
export function pendingCampaignRows(reason: string): BenchRow[] {
  const pending = (scenario: string, n: number, unit: string, goal: string) =>
    row({ scenario, n, unit, goal, pending: reason });
  return [
    pending("fan-out: batch start → last offer received", 2500, "ms", "≤ 1 s"),
    pending("fan-out: Control event-loop delay p99", 2500, "ms", "≤ 100 ms"),
    pending("rollout rate", 10_000, "nodes/min", "≥ 20,000/min"),
    pending("ack-to-commit of ObservedState, p50", 10_000, "ms", "vs single-row UPDATE"),
    pending("ack-to-commit of ObservedState, p99", 10_000, "ms", "vs single-row UPDATE"),
  ];
}

async function gatherMarks(sims: readonly SimProcess[], into: SimMarks[]): Promise<number> {
  into.push(...(await Promise.all(sims.map((sim) => sim.marks()))));
  return into.reduce((n, m) => n + m.offers.length, 0);
}

/** Runs the campaign and measures it; every wait is bounded. */
export async function runCampaignScenarios(ctx: CampaignContext): Promise<CampaignResult> {
  const { control, sims, fleet, release, say } = ctx;
  say("campaign: registering the signed release");
  await registerRelease(release, control.ctlEnv);
  const bearer: Interceptor = (next) => (req) => {
    req.header.set("authorization", `Bearer ${control.ctlEnv.AGENTCTL_TOKEN}`);
    return next(req);
  };
  const campaigns = createClient(
    CampaignService,
    createConnectTransport({
      baseUrl: `http://${control.adminAddr}`,
      httpVersion: "1.1",
      interceptors: [bearer],
    }),
  );
  await installAckProbe(ctx.databaseUrl);
  const marks: SimMarks[] = [];
  await gatherMarks(sims, marks);
  marks.length = 0;
  // Memory after GC here, so both fan-outs start from a collected heap; the delay's window
  // then starts without one.
  await ctx.target.memory();
  await ctx.target.eventLoopDelay();
  await Promise.all(sims.map((sim) => sim.traceStart(250)));
  const firstBatch = Math.ceil(fleet / 4);
  say(`campaign: starting over ${fleet} nodes (first batch ${firstBatch})`);
  const requested = Date.now();
  const started = await campaigns.startCampaign({
    spec: create(CampaignSpecSchema, {
      targetVersion: release.version,
      batches: [
        { percent: 25, minDuration: durationFromMs(0) },
        { percent: 100, minDuration: durationFromMs(0) },
      ],
      failureThresholdPercent: 5,
      concurrency: 0,
      disruptionBudgetPercent: 100,
      // Judged as soon as a node is back on the target: no wait for a late ConfigStatus.
      configGrace: durationFromMs(0),
      reason: "benchmark rollout",
    }),
  });
  const startedAt = Date.now();
  const id = started.campaign?.id ?? "";
  const fanoutDeadline = Date.now() + 60_000;
  while ((await gatherMarks(sims, marks)) < firstBatch && Date.now() < fanoutDeadline) {
    await sleep(50);
  }
  // No GC at the window's end: the rollout and its reports go on across it.
  const eld = await ctx.target.eventLoopDelay();
  const offers = marks.flatMap((m) => m.offers.map(([, at]) => at)).sort((a, b) => a - b);
  const lastOffer = offers[firstBatch - 1];
  say("campaign: waiting for the rollout to complete");
  const doneBy = Date.now() + 15 * 60_000;
  let phase = started.campaign?.phase ?? CampaignPhase.UNSPECIFIED;
  while (Date.now() < doneBy && phase === CampaignPhase.RUNNING) {
    await sleep(1000);
    phase = (await campaigns.getCampaign({ id, summaryOnly: true })).campaign?.phase ?? phase;
  }
  const completedAt = Date.now();
  const traces = await Promise.all(sims.map((sim) => sim.traceStop()));
  await gatherMarks(sims, marks);
  const onTarget = (at: number) =>
    traces.reduce((n, t) => {
      const last = t.filter((c) => c.at <= at).at(-1);
      return n + (last?.versions[release.version] ?? 0);
    }, 0);
  const allAt = traces
    .flat()
    .map((c) => c.at)
    .sort((a, b) => a - b)
    .find((at) => onTarget(at) >= fleet);
  const upgraded = onTarget(completedAt);
  const rolloutMs = (allAt ?? completedAt) - startedAt;
  const latencies = await ackLatencies(ctx.databaseUrl, marks);
  const acks = latencies.total;
  await removeAckProbe(ctx.databaseUrl);
  const fanoutMs = lastOffer === undefined ? Number.NaN : lastOffer - startedAt;
  const p50 = percentile(acks, 50);
  const p99 = percentile(acks, 99);
  const rate = (upgraded / Math.max(1, rolloutMs)) * 60_000;
  const rows: BenchRow[] = [
    row({
      scenario: FANOUT,
      n: firstBatch,
      unit: "ms",
      project: fanoutMs,
      goal: "≤ 1 s",
      met: fanoutMs <= 1000,
      note: `first offer after ${offers[0] === undefined ? "—" : offers[0] - startedAt} ms; StartCampaign took ${startedAt - requested} ms`,
    }),
    row({
      scenario: FANOUT_ELD,
      n: firstBatch,
      unit: "ms",
      project: eld?.p99 ?? Number.NaN,
      goal: "≤ 100 ms",
      met: eld === undefined ? undefined : eld.p99 <= 100,
      note: `max ${eld?.max.toFixed(0) ?? "—"} ms`,
    }),
    row({
      scenario: "rollout rate (zero minimum durations and config grace, instant restarts)",
      n: fleet,
      unit: "nodes/min",
      project: rate,
      goal: "≥ 20,000/min",
      met: rate >= 20_000 && upgraded === fleet,
      note: `${upgraded} of ${fleet} upgraded in ${(rolloutMs / 1000).toFixed(1)} s; campaign ${CampaignPhase[phase]}`,
    }),
    ...(
      [
        ["p50", p50, ctx.db.singleUpdateP50Ms],
        ["p99", p99, ctx.db.singleUpdateP99Ms],
      ] as const
    ).map(([name, value, base]) =>
      row({
        scenario: `ack-to-commit of ObservedState during the rollout, ${name}`,
        n: acks.length,
        unit: "ms",
        project: value,
        baseline: base,
        baselineName: "single-row autocommit UPDATE",
        ratio: ratio(value, base),
        goal: "reported",
        note: `sent → handled by Control's session ${percentile(latencies.toHandled, name === "p50" ? 50 : 99).toFixed(0)} ms, handled → committed ${percentile(latencies.toCommit, name === "p50" ? 50 : 99).toFixed(0)} ms (each part's own ${name})`,
      }),
    ),
  ];
  return { rows, raw: { id, fanoutMs, eld, rolloutMs, upgraded, phase, acks: acks.length } };
}

/**
 * `rows` with the bare server's fan-out to the same fleet (`bare-fanout.ts`) as the baseline
 * of the fan-out and its event-loop delay; the goals stay absolute. Unchanged without one.
 */
export function withFanoutBaseline(
  rows: readonly BenchRow[],
  bare: BareFanout | undefined,
): BenchRow[] {
  if (bare === undefined) return [...rows];
  return rows.map((r) => {
    if (r.scenario === FANOUT) {
      return {
        ...r,
        baseline: bare.lastMs,
        baselineName: "bare server's offers to the same agents",
        ratio: ratio(r.project, bare.lastMs),
        note: `${r.note ?? ""}; bare server: first offer after ${bare.firstMs} ms, its writes took ${bare.writeMs.toFixed(0)} ms`,
      };
    }
    if (r.scenario === FANOUT_ELD && bare.eldP99 !== undefined) {
      return {
        ...r,
        baseline: bare.eldP99,
        baselineName: "bare server's, meanwhile",
        ratio: ratio(r.project, bare.eldP99),
      };
    }
    return r;
  });
}
