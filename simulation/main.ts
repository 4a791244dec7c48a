/**
 * `npm run simulate -- --seed S --campaigns N [--no-faults] [--trace]`: runs N seeded
 * simulations (seeds S, S+1, …; each starts one to three campaigns), each once without faults and once with Control crashes,
 * lease losses and database outages, checking the invariants at every step and that the
 * faults did not change the outcome (I9). A failing seed prints the step, the broken
 * invariant and the trace; `--seed S --campaigns 1 --trace` replays it in full.
 * Exits 0 when every run held, 1 otherwise, 2 on a bad flag.
 */
import { parseArgs } from "node:util";
import { outcomeDifference } from "./compare.js";
import { type RunResult, runSeed } from "./run.js";

function fail(message: string): never {
  process.stderr.write(`simulate: ${message}\n`);
  process.exit(2);
}

function count(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value)) fail(`--${name} must be a non-negative integer, got "${value}"`);
  return Number(value);
}

function report(r: RunResult, what: string): void {
  process.stdout.write(
    [
      `seed ${r.seed} (${what}) broke an invariant at step ${r.violation?.step}, t=${((r.violation?.at ?? 0) / 1000).toFixed(3)}s:`,
      `  ${r.violation?.message.split("\n").join("\n  ")}`,
      "trace (last lines):",
      ...r.trace.map((l) => `  ${l}`),
      `replay: npm run simulate -- --seed ${r.seed} --campaigns 1 --trace`,
      "",
    ].join("\n"),
  );
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
    fail((error as Error).message);
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
    const clean = await runSeed(seed, { faults: false, fullTrace });
    steps += clean.steps;
    campaigns += clean.campaigns;
    if (clean.violation) {
      report(clean, "no faults");
      failed++;
      continue;
    }
    if (fullTrace) process.stdout.write(`${clean.trace.join("\n")}\n`);
    if (!faults) continue;
    const faulty = await runSeed(seed, { faults: true, fullTrace });
    steps += faulty.steps;
    campaigns += faulty.campaigns;
    if (faulty.violation) {
      report(faulty, "with faults");
      failed++;
      continue;
    }
    const difference = outcomeDifference(clean, faulty);
    if (difference !== undefined) {
      report(
        {
          ...faulty,
          violation: { step: faulty.steps, at: faulty.virtualMs, message: `I9: ${difference}` },
        },
        "with faults",
      );
      failed++;
    }
    if (fullTrace) process.stdout.write(`${faulty.trace.join("\n")}\n`);
  }
  const seconds = ((performance.now() - began) / 1000).toFixed(1);
  process.stdout.write(
    `${runs - failed} passed, ${failed} failed (seeds ${first}…${first + runs - 1}, ${campaigns} campaigns, ${steps} steps, ${seconds} s)\n`,
  );
  process.exit(failed === 0 ? 0 : 1);
}

await main();
