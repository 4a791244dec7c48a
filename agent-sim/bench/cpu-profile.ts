/**
 * A diagnosis tool behind the CPU figures (not part of `npm run bench`): runs Control with
 * `--cpu-prof` while N simulated agents heartbeat every `--heartbeat-ms`, stops it
 * cleanly after `--seconds`, and prints the self time of the hottest functions.
 *
 * Usage: `npx tsx agent-sim/bench/cpu-profile.ts [--count 1000] [--seconds 20] [--heartbeat-ms 1000]`
 */
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startBenchControl } from "./control.js";
import { sleep, startSimProcess, waitWelcomed } from "./processes.js";

interface Profile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  samples: number[];
  timeDeltas: number[];
  endTime: number;
}

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
  const profDir = join(dir, "prof");
  process.env.NODE_OPTIONS = `--cpu-prof --cpu-prof-dir=${profDir}`;
  const control = await startBenchControl(dir, {});
  delete process.env.NODE_OPTIONS;
  let windowStart = 0;
  let windowEnd = 0;
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
    await sleep(2000);
    windowStart = Date.now();
    await sleep(Number(values.seconds) * 1000);
    windowEnd = Date.now();
    await sim.stop();
  } finally {
    await control.stop();
  }
  const exitedAt = Date.now();
  for (const file of await readdir(profDir)) {
    const profile = JSON.parse(await readFile(join(profDir, file), "utf8")) as Profile;
    if (profile.samples.length < 100) continue;
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    const self = new Map<string, number>();
    // Only the steady-state window (profile time is µs, ending about when Control exited).
    const from = profile.endTime - (exitedAt - windowStart) * 1000;
    const to = profile.endTime - (exitedAt - windowEnd) * 1000;
    let t = profile.endTime - profile.timeDeltas.reduce((a, b) => a + b, 0);
    let total = 0;
    for (const [i, id] of profile.samples.entries()) {
      t += profile.timeDeltas[i] ?? 0;
      if (t < from || t > to) continue;
      total += 1;
      const frame = byId.get(id)?.callFrame;
      const key = `${frame?.functionName || "(anonymous)"} ${frame?.url.replace(/^.*node_modules\//, "") ?? ""}:${frame?.lineNumber ?? 0}`;
      self.set(key, (self.get(key) ?? 0) + 1);
    }
    process.stdout.write(`${file}: ${total} samples\n`);
    for (const [key, n] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 40)) {
      process.stdout.write(`${((100 * n) / total).toFixed(1).padStart(5)}%  ${key}\n`);
    }
  }
  await rm(dir, { recursive: true, force: true });
}

main().catch((error: unknown) => {
  process.stderr.write(`cpu-profile: ${String(error)}\n`);
  process.exitCode = 1;
});
