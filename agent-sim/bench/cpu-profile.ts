/**
 * A diagnosis tool behind the CPU figures (not part of `npm run bench`): profiles Control
 * (V8 CPU profiler through gc-hook.mjs) for `--seconds` while N simulated agents heartbeat
 * every `--heartbeat-ms`, and prints the self time of the hottest functions.
 *
 * `--phase connect` profiles the handshakes instead: from before the fleet connects (at
 * `--connect-rate`) until every agent is welcomed; `--reconnect` first connects the fleet
 * unprofiled, drops it, and profiles its reconnection with node tokens.
 *
 * Usage: `npx tsx agent-sim/bench/cpu-profile.ts [--count 1000] [--seconds 20] [--heartbeat-ms 1000]
 *   [--phase steady|connect] [--connect-rate 1000] [--reconnect] [--save-to FILE]`
 */
import { copyFile, mkdtemp, rm } from "node:fs/promises";
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
      phase: { type: "string", default: "steady" },
      "connect-rate": { type: "string", default: "1000" },
      reconnect: { type: "boolean", default: false },
      "save-to": { type: "string" },
    },
    strict: true,
  });
  const count = Number(values.count);
  const dir = await mkdtemp(join(tmpdir(), "agent-control-prof-"));
  process.env.AGENT_CONTROL_BENCH_PROFILE = "1";
  const control = await startBenchControl(dir, {});
  const connectPhase = values.phase === "connect";
  try {
    const simOptions = {
      server: control.agentAddr,
      joinToken: await control.joinToken(),
      count,
      connectRate: Number(values["connect-rate"]),
      download: false,
      heartbeatScale: Number(values["heartbeat-ms"]) / 10_000,
      ...(values.reconnect ? { stateDir: join(dir, "agents") } : {}),
    };
    if (values.reconnect) {
      const first = await startSimProcess(simOptions, join(dir, "sim-enroll.log"));
      await waitWelcomed([first], count, 300_000, `${count} streams (enrolment)`);
      await first.stop();
      await sleep(3000);
    }
    if (connectPhase) process.kill(control.pid(), "SIGWINCH");
    const startedAt = Date.now();
    const sim = await startSimProcess(simOptions, join(dir, "sim.log"));
    await waitWelcomed([sim], count, 300_000, `${count} streams`);
    const seconds = (Date.now() - startedAt) / 1000;
    process.stdout.write(`${count} welcomed in ${seconds.toFixed(1)} s\n`);
    if (!connectPhase) {
      await sleep(3000);
      process.kill(control.pid(), "SIGWINCH");
      await sleep(Number(values.seconds) * 1000);
    }
    process.kill(control.pid(), "SIGWINCH");
    await sleep(2000);
    await sim.stop();
    const label = connectPhase ? `while ${count} agents connect` : `over ${values.seconds} s`;
    await printProfileSummary(join(dir, "control-1.cpuprofile"), label);
    if (values["save-to"]) await copyFile(join(dir, "control-1.cpuprofile"), values["save-to"]);
  } finally {
    await control.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`cpu-profile: ${String(error)}\n`);
  process.exitCode = 1;
});
