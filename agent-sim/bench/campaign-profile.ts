/**
 * A diagnosis tool behind the campaign figures (not part of `npm run bench`): runs the
 * campaign scenarios of the full benchmark (fan-out, rollout, ack-to-commit) on a fleet of
 * `--count` simulated agents, optionally under the V8 CPU profiler (`--profile`), and prints
 * the figures and the self time of Control's hottest functions.
 *
 * Usage: `npx tsx agent-sim/bench/campaign-profile.ts [--count 10000] [--sims 2] [--profile] [--keep] [--sims-nice N]`
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { CAMPAIGN_POLICY, runCampaignScenarios } from "./campaign.js";
import { prepareRelease } from "./campaign-release.js";
import { startBenchControl } from "./control.js";
import { measureDbBaseline } from "./db-baseline.js";
import {
  SIM_NICE_ENV,
  type SimProcess,
  simulatorNiceness,
  sleep,
  startSimProcesses,
  waitWelcomed,
} from "./processes.js";
import { printProfileSummary } from "./profile-summary.js";
import { controlTarget } from "./target.js";

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      count: { type: "string", default: "10000" },
      sims: { type: "string", default: "2" },
      profile: { type: "boolean", default: false },
      keep: { type: "boolean", default: false },
      "sims-nice": { type: "string", default: "0" },
    },
    strict: true,
  });
  process.env[SIM_NICE_ENV] = values["sims-nice"];
  simulatorNiceness();
  const count = Number(values.count);
  const simCount = Number(values.sims);
  const dir = await mkdtemp(join(tmpdir(), "agent-control-cprof-"));
  const say = (text: string) => process.stdout.write(`${new Date().toISOString()} ${text}\n`);
  if (values.profile) process.env.AGENT_CONTROL_BENCH_PROFILE = "1";
  const release = await prepareRelease(dir, "2.0.0");
  const control = await startBenchControl(
    dir,
    { timeouts: { heartbeatSeconds: 10 }, policy: CAMPAIGN_POLICY },
    { AGENT_CONTROL_BENCH_ELD: "1", AGENT_CONTROL_RELEASE_PINS: release.pin },
  );
  const sims: SimProcess[] = [];
  try {
    const target = await controlTarget(control);
    const databaseUrl = await control.databaseUrl();
    const db = await measureDbBaseline(databaseUrl, 1000, 200, 3);
    await startSimProcesses(
      sims,
      count,
      simCount,
      (i, share) => ({
        server: target.server,
        joinToken: target.joinToken,
        count: share,
        seed: i + 1,
        idPrefix: `p${i}`,
        connectRate: 500,
        download: false,
        restartMs: [0, 0],
        pins: [release.pin],
      }),
      (i) => join(dir, `sim-${i}.log`),
      true,
    );
    await waitWelcomed(sims, count, 600_000, `${count} streams`);
    say(`${count} streams welcomed`);
    await sleep(3000);
    if (values.profile) process.kill(control.pid(), "SIGWINCH");
    const result = await runCampaignScenarios({
      control,
      target,
      sims,
      fleet: count,
      release,
      databaseUrl,
      db,
      say,
    });
    if (values.profile) {
      process.kill(control.pid(), "SIGWINCH");
      await sleep(3000);
    }
    for (const row of result.rows) {
      say(`${row.scenario} (N=${row.n}): ${row.project.toFixed(1)} ${row.unit} ${row.note ?? ""}`);
    }
    if (values.profile) {
      await printProfileSummary(join(dir, "control-1.cpuprofile"), "during the campaign", 50);
    }
  } finally {
    await Promise.all(sims.map((s) => s.stop()));
    await control.stop();
    if (values.keep) say(`kept ${dir}`);
    else await rm(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`campaign-profile: ${(error as Error).stack ?? String(error)}\n`);
  process.exitCode = 1;
});
