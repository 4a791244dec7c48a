/**
 * `npx tsx agent-sim/bench/agent-start.ts [--runs N]`: builds the Agent both ways (the
 * `.mjs` ES module and the single executable), then times N interleaved rounds (after one
 * warm-up round) of `status --install-dir EMPTY` and of `--help`, next to `node -e 0`, and
 * prints the artifact sizes and min / p10 / median / p90 / max wall times as one JSON object.
 */
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs, promisify } from "node:util";
import { bundleAgent } from "../../agent/bundle.js";
import { hostPlatform } from "../../agent/cli-args.js";
import { buildExecutable } from "../../agent/executable.js";

const run = promisify(execFile);

/** A command to time. */
interface Candidate {
  readonly name: string;
  readonly file: string;
  readonly args: readonly string[];
}

/**
 * Times `runs` rounds of every candidate (one warm-up round first); each round runs them
 * in a rotated order, so that a load that comes and goes falls on all of them alike.
 * Returns each candidate's wall times in ms, sorted.
 */
async function time(
  candidates: readonly Candidate[],
  runs: number,
): Promise<Map<string, number[]>> {
  const times = new Map(candidates.map((c) => [c.name, [] as number[]]));
  for (let round = -1; round < runs; round++) {
    for (let i = 0; i < candidates.length; i++) {
      const c = candidates[(i + Math.max(round, 0)) % candidates.length] as Candidate;
      const start = process.hrtime.bigint();
      await run(c.file, [...c.args]);
      if (round >= 0) times.get(c.name)?.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
  }
  for (const list of times.values()) list.sort((a, b) => a - b);
  return times;
}

function summary(times: readonly number[]) {
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))] ?? 0;
  const round = (ms: number) => Math.round(ms * 10) / 10;
  return {
    runs: times.length,
    min: round(at(0)),
    p10: round(at(0.1)),
    median: round(at(0.5)),
    p90: round(at(0.9)),
    max: round(at(1)),
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { runs: { type: "string", default: "20" } } });
  const runs = Number(values.runs);
  const dir = await mkdtemp(join(tmpdir(), "agent-start-"));
  try {
    const options = { version: "1.0.0", platform: hostPlatform() };
    const mjs = join(dir, "agent.mjs");
    const exe = join(dir, "agent");
    await writeFile(mjs, await bundleAgent(options));
    await buildExecutable(options, exe);
    const empty = join(dir, "install");
    await mkdir(empty);
    const status = ["status", "--install-dir", empty];
    const node = process.execPath;
    const times = await time(
      [
        { name: "node -e 0", file: node, args: ["-e", "0"] },
        { name: "node agent.mjs status", file: node, args: [mjs, ...status] },
        { name: "agent status", file: exe, args: status },
        { name: "node agent.mjs --help", file: node, args: [mjs, "--help"] },
        { name: "agent --help", file: exe, args: ["--help"] },
      ],
      runs,
    );
    const result = {
      node: process.version,
      sizeBytes: { mjs: (await stat(mjs)).size, executable: (await stat(exe)).size },
      startMs: Object.fromEntries([...times].map(([name, list]) => [name, summary(list)])),
    };
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
