/**
 * A diagnosis tool behind the memory figures (not part of `npm run bench`): holds N
 * simulated streams on Control or the bare server, takes a heap snapshot before and
 * after (through gc-hook.mjs), and prints what grew, per constructor, per stream.
 *
 * Usage: `npx tsx agent-sim/bench/heap-profile.ts [--count 2000] [--target control|bare]`
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startBenchControl } from "./control.js";
import { sleep, startSimProcess, waitWelcomed } from "./processes.js";
import { bareTarget, controlTarget, type Target } from "./target.js";

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

/** Self size and count per `type:name` of a heap snapshot file. */
async function heapCensus(file: string): Promise<Map<string, { size: number; count: number }>> {
  const data = JSON.parse(await readFile(file, "utf8")) as Snapshot;
  const fields = data.snapshot.meta.node_fields;
  const types = data.snapshot.meta.node_types[0];
  const width = fields.length;
  const [typeAt, nameAt, sizeAt] = ["type", "name", "self_size"].map((f) => fields.indexOf(f));
  const census = new Map<string, { size: number; count: number }>();
  for (let i = 0; i < data.nodes.length; i += width) {
    const type = types[data.nodes[i + (typeAt ?? 0)] as number] ?? "?";
    const rawName = data.strings[data.nodes[i + (nameAt ?? 1)] as number] ?? "";
    const name = ["object", "closure", "code"].includes(type) ? rawName.slice(0, 60) : "";
    const key = `${type}:${name}`;
    const entry = census.get(key) ?? { size: 0, count: 0 };
    entry.size += data.nodes[i + (sizeAt ?? 3)] as number;
    entry.count += 1;
    census.set(key, entry);
  }
  return census;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      count: { type: "string", default: "2000" },
      target: { type: "string", default: "control" },
    },
    strict: true,
  });
  const count = Number(values.count);
  const dir = await mkdtemp(join(tmpdir(), "agent-control-heap-"));
  process.env.AGENT_CONTROL_BENCH_SNAPSHOT = "1";
  const control = values.target === "control" ? await startBenchControl(dir, {}) : undefined;
  const bare = control ? undefined : await bareTarget(dir, 10_000);
  const target: Target = control ? await controlTarget(control) : (bare as Target);
  const name = control ? "control" : "echo";
  try {
    await sleep(3000);
    await target.memory();
    const sim = await startSimProcess(
      {
        server: target.server,
        joinToken: target.joinToken,
        count,
        connectRate: 1000,
        download: false,
      },
      join(dir, "sim.log"),
    );
    await waitWelcomed([sim], count, 120_000, `${count} streams`);
    await sleep(5000);
    await target.memory();
    const before = await heapCensus(join(dir, `${name}-1.heapsnapshot`));
    const after = await heapCensus(join(dir, `${name}-2.heapsnapshot`));
    const rows = [...after].map(([key, a]) => {
      const b = before.get(key) ?? { size: 0, count: 0 };
      return { key, bytes: (a.size - b.size) / count, objects: (a.count - b.count) / count };
    });
    rows.sort((x, y) => y.bytes - x.bytes);
    const total = rows.reduce((n, r) => n + r.bytes, 0);
    process.stdout.write(`${name}: ${total.toFixed(0)} heap bytes per stream\n`);
    for (const r of rows.slice(0, 40)) {
      process.stdout.write(
        `${r.bytes.toFixed(1).padStart(9)} B ${r.objects.toFixed(2).padStart(6)} objs  ${r.key}\n`,
      );
    }
    await sim.stop();
  } finally {
    await control?.stop();
    await bare?.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`heap-profile: ${String(error)}\n`);
  process.exitCode = 1;
});
