/**
 * `npm run bench:engine [-- --sizes 10000,40000,160000] [--runs 3] [--ops NAME,…] [--no-write]`:
 * the engine scaling scenario alone (`engine-report.ts`). Exits 1 when an operation's time grows
 * beyond the goal for each 4× of nodes. Run it under `nice -n 10` on a shared machine: the
 * ratios compare times of the same run, which a busy neighbour slows alike.
 */
import { runEngineBench } from "./engine-report.js";

runEngineBench(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`bench:engine: ${(error as Error).stack ?? String(error)}\n`);
    process.exitCode = 1;
  },
);
