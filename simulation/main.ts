/**
 * `npm run simulate -- --seed S --campaigns N [--no-faults] [--trace]`: runs N seeded
 * simulations (seeds S, S+1, …; each starts one to three campaigns), each once without faults and once with Control crashes,
 * lease losses and database outages, checking the invariants at every step and that the
 * faults did not change the outcome (I9). A failing seed prints the step, the broken
 * invariant and the trace; `--seed S --campaigns 1 --trace` replays it in full.
 * Exits 0 when every run held, 1 otherwise, 2 on a bad flag.
 */
import { parseArgs } from "node:util";
import { checkSeed } from "./check-seed.js";

function fail(message: string): never {
  process.stderr.write(`simulate: ${message}\n`);
  process.exit(2);
}

function count(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value)) fail(`--${name} must be a non-negative integer, got "${value}"`);
  return Number(value);
}

async function main(): Promise<void> {
  let values: ReturnType<typeof parse>["values"];
  const parse = () =>
    parseArgs({
      options: {
        seed: { type: "string" },
        campaigns: { type: "string" },
        "no-faults": { type: "boolean" },
        trace: { type: "boolean" },
      },
      strict: true,
    });
  try {
    values = parse().values;
  } catch (error) {
    // One line: node's parser explains a missing value over three.
    fail((error as Error).message.split("\n")[0] ?? "bad arguments");
  }
  const first = count("seed", values.seed, 1);
  const runs = count("campaigns", values.campaigns, 100);
  const faults = values["no-faults"] !== true;
  const fullTrace = values.trace === true;
  let failed = 0;
  let steps = 0;
  let campaigns = 0;
  const began = performance.now();
  for (let seed = first; seed < first + runs; seed++) {
    const checked = await checkSeed(seed, { faults, fullTrace });
    steps += checked.steps;
    campaigns += checked.campaigns;
    if (checked.failure !== undefined) {
      failed++;
      process.stdout.write(`${checked.failure}\n`);
    }
    if (fullTrace) {
      for (const run of [checked.clean, checked.faulty]) {
        if (run !== undefined) process.stdout.write(`${run.trace.join("\n")}\n`);
      }
    }
  }
  const seconds = ((performance.now() - began) / 1000).toFixed(1);
  process.stdout.write(
    `${runs - failed} passed, ${failed} failed (seeds ${first}…${first + runs - 1}, ${campaigns} campaigns, ${steps} steps, ${seconds} s)\n`,
  );
  process.exit(failed === 0 ? 0 : 1);
}

await main();
