/**
 * `npm run bench -- --downloads [--agents N] [--size-mb M] [--max-downloads K]` runs the
 * bandwidth scenario alone (`downloads.ts`) and writes nothing under docs/.
 * `npm run bench -- --resume`: a download on a link cut every 2 MiB (`downloads-resume.ts`).
 *
 * `npm run bench -- --engine [--levels 10000,40000,160000]` runs the engine scaling scenario
 * alone (`engine-report.ts`, as `npm run bench:engine`; several minutes, so not by default) and
 * writes its own section of `docs/BENCHMARKS.md`.
 *
 * `npm run bench [-- --quick] [--out DIR] [--keep] [--sims-nice N]`: starts a real Control (embedded
 * PostgreSQL) and the bare grpc-js baseline, each measured with simulated fleets in
 * separate processes, runs every scenario, and writes `docs/BENCHMARKS.md` plus
 * `docs/benchmarks.json` (quick mode: `reports/bench/benchmarks-quick.json` only, ignored by git).
 *
 * `--quick` (CI): N = 1,000, about two minutes; exits 1 when a ratio is beyond its bound.
 * Full mode (N = 1k/5k/10k) is run by hand and its results committed.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { runBareScenarios } from "./bare-scenarios.js";
import {
  CAMPAIGN_POLICY,
  pendingCampaignRows,
  runCampaignScenarios,
  withFanoutBaseline,
} from "./campaign.js";
import { prepareRelease } from "./campaign-release.js";
import { measureCampaignTicks, tickRows } from "./campaign-tick.js";
import { startBenchControl } from "./control.js";
import { dbCounters, measureDbBaseline } from "./db-baseline.js";
import { runDownloadsBench } from "./downloads.js";
import { downloadsTable, writeDownloadsReport } from "./downloads-report.js";
import { resumeOnly } from "./downloads-resume.js";
import { runEngineBench } from "./engine-report.js";
import { runFleetLoad } from "./fleet-load.js";
import {
  DEFAULT_HANDSHAKES_PER_CREDENTIAL,
  type HandshakeBurst,
  handshakeBurst,
  handshakeRows,
  MASS_ENROLMENT_LIMITS,
} from "./handshakes.js";
import { FULL, type Mode, QUICK } from "./modes.js";
import { ROOT, SIM_NICE_ENV, simulatorNiceness } from "./processes.js";
import { type BenchReport, spreadText, writeReport } from "./report.js";
import { type BenchRow, dbRows, fleetRows, perStream } from "./rows.js";
import { controlTarget } from "./target.js";
import { measureWorkers, type WorkersResult } from "./workers.js";

const T0 = Date.now();

function say(text: string): void {
  const at = ((Date.now() - T0) / 1000).toFixed(1).padStart(6);
  process.stdout.write(`bench ${at} s: ${text}\n`);
}

/** `--downloads`: the bandwidth scenario alone; 0 when both campaigns completed. */
async function downloadsOnly(values: {
  agents: string;
  "size-mb": string;
  "max-downloads": string;
}): Promise<number> {
  const whole = (name: string, text: string) => {
    const n = Number(text);
    if (!Number.isSafeInteger(n) || n < 1) throw new Error(`--${name} must be a whole number ≥ 1`);
    return n;
  };
  const plan = {
    agents: whole("agents", values.agents),
    sizeBytes: whole("size-mb", values["size-mb"]) * 1024 * 1024,
    maxDownloads: whole("max-downloads", values["max-downloads"]),
    simulators: 2,
    timeoutMs: 20 * 60_000,
  };
  const measures = await runDownloadsBench(plan, say);
  process.stdout.write(`\n${downloadsTable(plan, measures)}\n`);
  say(`wrote ${await writeDownloadsReport(plan, measures)}`);
  return measures.every((m) => m.completed) ? 0 : 1;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      quick: { type: "boolean", default: false },
      keep: { type: "boolean", default: false },
      // Default: docs/ for the full run (its record), reports/bench/ (ignored by git) for --quick.
      out: { type: "string" },
      // For trying the full scenarios on a smaller fleet, e.g. --levels 1000,2000.
      levels: { type: "string" },
      // Stream-holding processes of the --workers scenario (full mode).
      workers: { type: "string", default: "2" },
      // The simulators' niceness (0-19): 10 lets the measured server run first (processes.ts).
      "sims-nice": { type: "string", default: "0" },
      // The bandwidth scenario alone (downloads.ts).
      downloads: { type: "boolean", default: false },
      agents: { type: "string", default: "2000" },
      "size-mb": { type: "string", default: "20" },
      "max-downloads": { type: "string", default: "64" },
      // A download on a poor link, resumed or not (downloads-resume.ts).
      resume: { type: "boolean", default: false },
      // The engine scaling scenario alone (engine-report.ts); --levels are its fleet sizes.
      engine: { type: "boolean", default: false },
    },
    strict: true,
  });
  process.env[SIM_NICE_ENV] = values["sims-nice"];
  simulatorNiceness();
  if (values.downloads) return await downloadsOnly(values);
  if (values.resume) return await resumeOnly(say);
  if (values.engine) return await runEngineBench(values.levels ? ["--sizes", values.levels] : []);
  const chosen = values.quick ? QUICK : FULL;
  const levels = values.levels?.split(",").map(Number);
  const mode: Mode = levels ? { ...chosen, plan: { ...chosen.plan, levels } } : chosen;
  const started = Date.now();
  const dir = await mkdtemp(join(tmpdir(), "agent-control-bench-"));
  const nice = simulatorNiceness();
  say(`${mode.name} mode; work dir ${dir}${nice > 0 ? `; simulators at nice ${nice}` : ""}`);
  // Campaigns run in full mode only (quick mode stays within two minutes).
  const release = mode.name === "full" ? await prepareRelease(dir, "2.0.0") : undefined;
  say("starting Control (embedded PostgreSQL)");
  const heartbeatSeconds = 10;
  // Under a mass enrolment's limits (`handshakes.ts`); the default cap is measured apart, last.
  const controlConfig = { timeouts: { heartbeatSeconds }, policy: CAMPAIGN_POLICY };
  const control = await startBenchControl(
    dir,
    { ...controlConfig, limits: MASS_ENROLMENT_LIMITS },
    {
      AGENT_CONTROL_BENCH_ELD: "1",
      ...(release ? { AGENT_CONTROL_RELEASE_PINS: release.pin } : {}),
    },
  );
  const rows: BenchRow[] = [];
  try {
    const dbUrl = await control.databaseUrl();
    say("raw SQL baselines");
    const db = await measureDbBaseline(dbUrl, mode.dbRows, mode.singles, 5);
    rows.push(...dbRows(db));
    say("campaign tick on seeded campaigns");
    const ticks = await measureCampaignTicks(dbUrl, mode.ticks.sizes, {
      repeats: mode.ticks.repeats,
      say,
    });
    const plan = { ...mode.plan, logDir: dir };
    let before = await dbCounters(dbUrl);
    let writes = { rows: 0, commits: 0, seconds: 0 };
    let campaignRows = pendingCampaignRows("full mode only (npm run bench)");
    let campaignRaw: unknown;
    const target = await controlTarget(control);
    const burst = {
      agents: mode.handshakes.agents,
      simulators: 2,
      connectRate: 500,
      timeoutMs: mode.plan.levelTimeoutMs,
      logDir: dir,
      stateDir: join(dir, "handshake-agents"),
    };
    const controlLoad = await runFleetLoad(
      target,
      {
        ...plan,
        simOptions: { restartMs: [0, 0], ...(release ? { pins: [release.pin] } : {}) },
        instrument: release !== undefined,
      },
      {
        onStep: say,
        beforeCpu: async () => {
          before = await dbCounters(dbUrl);
        },
        afterCpu: async () => {
          const after = await dbCounters(dbUrl);
          writes = {
            rows: after.nodeRowsUpdated - before.nodeRowsUpdated,
            commits: after.commits - before.commits,
            seconds: (after.at - before.at) / 1000,
          };
        },
        whileHeld: async (sims, held) => {
          if (release === undefined) return;
          const context = {
            control,
            target,
            sims,
            fleet: held,
            release,
            databaseUrl: dbUrl,
            db,
            say,
          };
          try {
            const result = await runCampaignScenarios(context);
            campaignRows = result.rows;
            campaignRaw = result.raw;
          } catch (error) {
            say(`campaign scenarios failed: ${(error as Error).message}`);
            campaignRows = pendingCampaignRows(`failed: ${(error as Error).message.slice(0, 120)}`);
          }
        },
      },
    );
    // After the fleet scenarios, so the bursts' peak never shows in their memory readings.
    say(`control: ${burst.agents} agents enrolling at once`);
    const enrol = await handshakeBurst(target, { ...burst, label: "enrol" });
    say(`control: the same ${burst.agents} agents coming back with node tokens`);
    const reconnect = await handshakeBurst(target, { ...burst, label: "reconnect" });
    // Reported, not bounded: it may take several times as long (the cap paces one token), and
    // a burst that does not finish only says so in its row. Full mode only: at the cap it takes
    // about 40 s of the quick run's CI time for a row that gates nothing.
    let enrolDefault: HandshakeBurst | string | undefined;
    if (mode.name !== "quick") {
      say(
        `control: ${burst.agents} new agents enrolling at once at the default limits.handshakesPerCredential (${DEFAULT_HANDSHAKES_PER_CREDENTIAL})`,
      );
      await control.kill();
      await control.restart(controlConfig);
      enrolDefault = await handshakeBurst(await controlTarget(control), {
        ...burst,
        timeoutMs: 4 * burst.timeoutMs,
        stateDir: join(dir, "handshake-agents-default"),
        label: "enrol-default",
        idPrefix: "control-hs-default",
      }).catch((error: unknown): string => {
        say(`default-cap enrolment: ${(error as Error).message}`);
        return (error as Error).message;
      });
    }
    const {
      load: bareLoad,
      burst: bareBurst,
      fanout: bareFanout,
    } = await runBareScenarios({
      dir,
      heartbeatMs: heartbeatSeconds * 1000,
      plan: { ...plan, storms: mode.bareStorms },
      stormDowntimeMs: controlLoad.storms[0]?.downtimeMs,
      release,
      burst,
      say,
    });
    let workers: WorkersResult | undefined;
    const fleet = mode.plan.levels.at(-1) ?? 0;
    if (release !== undefined) {
      try {
        workers = await measureWorkers({
          workers: Number(values.workers),
          agents: fleet,
          agentsPerSimulator: 5000,
          connectRate: 1000,
          timeoutMs: mode.plan.levelTimeoutMs,
          release,
          bare: {
            rssKbPerStream: perStream(bareLoad.points, fleet, (p) => p.memory.vmRss),
            streams: fleet,
          },
          dir,
          say,
        });
      } catch (error) {
        const message = (error as Error).message;
        say(`--workers scenario failed: ${message}`);
        workers = {
          rows: [
            {
              scenario: `--workers ${values.workers}: memory per held stream and rollout rate`,
              n: fleet,
              unit: "",
              project: Number.NaN,
              baseline: Number.NaN,
              baselineName: "",
              ratio: Number.NaN,
              goal: "≤ 1.3×, ≥ 20,000/min",
              met: undefined,
              pending: `failed: ${message.slice(0, 120)}`,
            },
          ],
          raw: { error: message },
          pgLoad: {},
        };
      }
    }
    rows.push(...fleetRows(controlLoad, bareLoad, mode.bounds));
    const handshakes = { enrol, reconnect, bare: bareBurst, enrolDefault };
    rows.push(...handshakeRows(handshakes, mode.handshakes.minRatio));
    const beats = controlLoad.cpu.reduce((n, w) => n + w.heartbeats, 0);
    rows.push({
      scenario: "heartbeat cost: nodes rows written per heartbeat",
      n: controlLoad.points.at(-1)?.streams ?? 0,
      unit: "rows/heartbeat",
      project: writes.rows / Math.max(1, beats),
      baseline: Number.NaN,
      baselineName: "",
      ratio: Number.NaN,
      goal: "< 1 (no row per heartbeat)",
      met: writes.rows < beats,
      note: `${(writes.commits / Math.max(1, writes.seconds)).toFixed(1)} commits/s in the whole database, autovacuum included`,
    });
    rows.push(...tickRows(ticks, mode.ticks.bound));
    rows.push(...withFanoutBaseline(campaignRows, bareFanout));
    rows.push(...(workers?.rows ?? []));
    const report: BenchReport = {
      mode: mode.name,
      startedAt: new Date(started).toISOString(),
      durationSeconds: (Date.now() - started) / 1000,
      rows,
      raw: {
        controlLoad,
        bareLoad,
        handshakes,
        db,
        writes,
        campaign: campaignRaw,
        bareFanout,
        ticks,
        workers: workers === undefined ? undefined : { ...workers.raw, pgLoad: workers.pgLoad },
      },
    };
    await writeReport(report, values.out ?? join(ROOT, values.quick ? "reports/bench" : "docs"));
    const failed = rows.filter(
      (r) =>
        (r.maxRatio !== undefined && !(r.ratio <= r.maxRatio)) ||
        (r.minRatio !== undefined && !(r.ratio >= r.minRatio)) ||
        (r.maxValue !== undefined && !(r.project <= r.maxValue)),
    );
    const verdict = mode.name === "quick" ? "FAIL" : "goal not met:";
    for (const row of failed) {
      say(
        `${verdict} ${row.scenario} (N=${row.n}): ratio ${row.ratio.toFixed(2)}${spreadText(row)} (bound ${row.maxRatio ?? (row.minRatio === undefined ? "—" : `≥ ${row.minRatio}`)}), figure ${row.project.toFixed(2)} (bound ${row.maxValue ?? "—"})`,
      );
    }
    say(`done in ${Math.round((Date.now() - started) / 1000)} s`);
    // Only quick mode gates (CI); a full run reports its gaps in the table.
    return mode.name === "quick" && failed.length > 0 ? 1 : 0;
  } finally {
    await control.stop();
    if (!values.keep) await rm(dir, { recursive: true, force: true });
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`bench: ${(error as Error).stack ?? String(error)}\n`);
    process.exitCode = 1;
  },
);
