/**
 * `npx tsx agent-sim/bench/agent-start.ts [--runs N]`: builds the Agent both ways (the
 * `.mjs` ES module and the single executable), then times N runs of each (after one
 * warm-up run) of `status --install-dir EMPTY` and of `--help`, next to `node -e 0`, and
 * prints the artifact sizes and min / median / max wall times as one JSON object.
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

/** Times `runs` runs of `file args` (one warm-up first); returns ms, sorted. */
async function time(file: string, args: readonly string[], runs: number): Promise<number[]> {
  await run(file, [...args]);
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = process.hrtime.bigint();
    await run(file, [...args]);
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return times.sort((a, b) => a - b);
}

function summary(times: readonly number[]) {
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))] ?? 0;
  const round = (ms: number) => Math.round(ms * 10) / 10;
  return { runs: times.length, minMs: round(at(0)), medianMs: round(at(0.5)), maxMs: round(at(1)) };
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
    const result = {
      node: process.version,
      sizeBytes: { mjs: (await stat(mjs)).size, executable: (await stat(exe)).size },
      nodeBare: summary(await time(node, ["-e", "0"], runs)),
      status: {
        mjs: summary(await time(node, [mjs, ...status], runs)),
        executable: summary(await time(exe, status, runs)),
      },
      help: {
        mjs: summary(await time(node, [mjs, "--help"], runs)),
        executable: summary(await time(exe, ["--help"], runs)),
      },
    };
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
