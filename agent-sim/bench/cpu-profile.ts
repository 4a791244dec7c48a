/**
 * A diagnosis tool behind the CPU figures (not part of `npm run bench`): profiles Control
 * (V8 CPU profiler through gc-hook.mjs) for `--seconds` while N simulated agents heartbeat
 * every `--heartbeat-ms`, and prints the self time of the hottest functions.
 *
 * Usage: `npx tsx agent-sim/bench/cpu-profile.ts [--count 1000] [--seconds 20] [--heartbeat-ms 1000]`
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startBenchControl } from "./control.js";
import { sleep, startSimProcess, waitWelcomed } from "./processes.js";
import { printProfileSummary } from "./profile-summary.js";

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      count: { type: "string", default: "1000" },
      seconds: { type: "string", default: "20" },
      "heartbeat-ms": { type: "string", default: "1000" },
    },
    strict: true,
  });
  const count = Number(values.count);
  const dir = await mkdtemp(join(tmpdir(), "agent-control-prof-"));
  process.env.AGENT_CONTROL_BENCH_PROFILE = "1";
  const control = await startBenchControl(dir, {});
  try {
    const sim = await startSimProcess(
      {
        server: control.agentAddr,
        joinToken: await control.joinToken(),
        count,
        connectRate: 1000,
        download: false,
        heartbeatScale: Number(values["heartbeat-ms"]) / 10_000,
      },
      join(dir, "sim.log"),
    );
    await waitWelcomed([sim], count, 120_000, `${count} streams`);
    await sleep(3000);
    process.kill(control.pid(), "SIGWINCH");
    await sleep(Number(values.seconds) * 1000);
    process.kill(control.pid(), "SIGWINCH");
    await sleep(2000);
    await sim.stop();
    await printProfileSummary(join(dir, "control-1.cpuprofile"), `over ${values.seconds} s`);
  } finally {
    await control.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`cpu-profile: ${String(error)}\n`);
  process.exitCode = 1;
});
