/**
 * A diagnosis tool behind the campaign figures (not part of `npm run bench`): runs the
 * campaign scenarios of the full benchmark (fan-out, rollout, ack-to-commit) on a fleet of
 * `--count` simulated agents, optionally under the V8 CPU profiler (`--profile`), and prints
 * the figures and the self time of Control's hottest functions.
 *
 * Usage: `npx tsx agent-sim/bench/campaign-profile.ts [--count 10000] [--sims 2] [--profile] [--keep]`
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { CAMPAIGN_POLICY, runCampaignScenarios } from "./campaign.js";
import { prepareRelease } from "./campaign-release.js";
import { startBenchControl } from "./control.js";
import { measureDbBaseline } from "./db-baseline.js";
import { type SimProcess, sleep, startSimProcess, waitWelcomed } from "./processes.js";
import { controlTarget } from "./target.js";

interface Profile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  samples: number[];
}

function printProfile(profile: Profile): void {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  for (const id of profile.samples) {
    const frame = byId.get(id)?.callFrame;
    const url = frame?.url.replace(/^.*node_modules\//, "").replace(/^.*\/main\//, "") ?? "";
    const key = `${frame?.functionName || "(anonymous)"} ${url}:${frame?.lineNumber ?? 0}`;
    self.set(key, (self.get(key) ?? 0) + 1);
  }
  const total = profile.samples.length;
  process.stdout.write(`${total} samples\n`);
  for (const [key, n] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 50)) {
    process.stdout.write(`${((100 * n) / total).toFixed(1).padStart(5)}%  ${key}\n`);
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      count: { type: "string", default: "10000" },
      sims: { type: "string", default: "2" },
      profile: { type: "boolean", default: false },
      keep: { type: "boolean", default: false },
    },
    strict: true,
  });
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
    for (let i = 0; i < simCount; i++) {
      const share = Math.floor(count / simCount) + (i < count % simCount ? 1 : 0);
      sims.push(
        await startSimProcess(
          {
            server: target.server,
            joinToken: target.joinToken,
            count: share,
            seed: i + 1,
            idPrefix: `p${i}`,
            connectRate: 500,
            download: false,
            restartMs: [0, 0],
            pins: [release.pin],
          },
          join(dir, `sim-${i}.log`),
          true,
        ),
      );
    }
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
      printProfile(
        JSON.parse(await readFile(join(dir, "control-1.cpuprofile"), "utf8")) as Profile,
      );
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
