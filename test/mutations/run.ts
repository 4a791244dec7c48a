/**
 * `npm run mutation:defects [-- --only NN,NN] [--seeds N] [--first S]`: shows that the
 * simulation finds each fixed engine defect by itself. For every patch in this folder
 * (`NN-short-name.patch`, a `git diff` against the fixed code that reintroduces defect NN), it
 * copies the working tree (tracked and untracked files git does not ignore) into a temporary
 * folder, applies the patch there — never to the working tree — and runs `npm test`'s seeds
 * (`simulate --seed 1 --campaigns 600`: seeds 1…600, each without and with faults), stopping at
 * the first seed that breaks an invariant. It prints, per patch, that seed and the invariant.
 *
 * A defect no simulation invariant can reach (the call stack at 150,000 nodes, a behaviour no
 * simulated agent has, Controls on different clocks) is listed in
 * {@link CAUGHT_BY_TEST} with the test that catches it instead; that test is run on the patched
 * copy and must fail. Exits 0 when every patch was caught, 1 when one was not (or did not
 * apply), 2 on a bad flag. Not part of `npm test`: it is CPU heavy (one patch at a time).
 */
import { execFileSync, spawn } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const HERE = join(ROOT, "test/mutations");

/** Patches whose defect is caught by a test rather than by a simulation invariant, and why. */
const CAUGHT_BY_TEST: Readonly<Record<string, { readonly test: string; readonly why: string }>> = {
  "01-disabled-offered": {
    test: "test/unit/campaign-worker/worker.test.ts",
    why: "seeds 1…600 of generation 3 (2026-12-07, after the late rollbacks) hold with it: the disable-next scenario no longer meets two disabled nodes its Control has not read in a row; the worker test disables a node after its row was read",
  },
  "08-wake-spread": {
    test: "test/unit/campaign/fleet-scale.test.ts",
    why: "the stack depth at 150,000 nodes: the simulation's fleets hold at most 40 agents",
  },
  "29-desired-over-max-failures": {
    test: "test/unit/campaign/desired-record.test.ts",
    why: "DV1 judges it, but seeds 1…100 hold no campaign over its --max-failures that an operator resumed to completion with a desired version recorded",
  },
  "31-report-dropped-on-earlier-stamp": {
    test: "test/integration/campaign-store-contract/facts.test.ts",
    why: "the simulated Controls share one manual clock, so a later report never carries an earlier stamp; the store contract (memory and PostgreSQL) writes reports through Controls 5 s apart",
  },
};

/** What one patch's run found. */
interface Finding {
  readonly patch: string;
  readonly caught: boolean;
  /** `seed S (with faults)`, or the test that failed. */
  readonly where: string;
  /** The invariant's first message line, or why not caught. */
  readonly what: string;
}

/** Copies the working tree's files (as git lists them) into a fresh temporary folder. */
function copyTree(): string {
  const dir = mkdtempSync(join(tmpdir(), "agent-control-defect-"));
  const files = execFileSync("git", ["ls-files", "-co", "--exclude-standard", "-z"], {
    cwd: ROOT,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  })
    .split("\0")
    // A worktree whose node_modules is a symlink lists it (".gitignore" names a folder).
    .filter((f) => f !== "" && f !== "node_modules");
  for (const f of files) {
    mkdirSync(dirname(join(dir, f)), { recursive: true });
    try {
      cpSync(join(ROOT, f), join(dir, f));
    } catch {
      // A file listed by git but deleted in the working tree: it is not part of the copy.
    }
  }
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
  return dir;
}

/** Runs `args` in `cwd`; resolves with its exit status once `stop(line)` said so or it ended. */
function run(
  cwd: string,
  args: readonly string[],
  onLine: (line: string) => boolean,
): Promise<number | null> {
  return new Promise((done) => {
    const child = spawn(args[0] as string, args.slice(1), {
      cwd,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, FORCE_COLOR: "0", NO_COLOR: "1" },
    });
    let buffer = "";
    let stopped = false;
    const feed = (chunk: Buffer) => {
      buffer += chunk.toString();
      const lines = buffer.split("\n");
      buffer = lines.pop() ?? "";
      for (const line of lines) {
        if (!stopped && onLine(line)) {
          stopped = true;
          child.kill("SIGTERM");
        }
      }
    };
    child.stdout.on("data", feed);
    child.stderr.on("data", feed);
    child.on("close", (code) => done(code));
  });
}

/** The simulation over the patched copy, stopped at its first failing seed. */
async function simulate(
  dir: string,
  patch: string,
  first: number,
  seeds: number,
): Promise<Finding> {
  let where = "";
  let what = "";
  let summary = "";
  const tsx = join(ROOT, "node_modules/.bin/tsx");
  const args = [tsx, "simulation/main.ts", "--seed", String(first), "--campaigns", String(seeds)];
  await run(dir, args, (line) => {
    const broke = /^seed (\d+) \((with faults|no faults)\) broke an invariant/.exec(line);
    if (broke) {
      where = `seed ${broke[1]} (${broke[2]})`;
      return false;
    }
    if (where !== "" && what === "") {
      what = line.trim();
      return true;
    }
    if (/ passed, \d+ failed/.test(line)) summary = line;
    return false;
  });
  if (where !== "") return { patch, caught: true, where, what };
  return { patch, caught: false, where: "—", what: summary || "the simulation did not run" };
}

/** The named test over the patched copy: it must fail. */
async function unitTest(dir: string, patch: string, test: string, why: string): Promise<Finding> {
  const vitest = join(ROOT, "node_modules/.bin/vitest");
  let failedLine = "";
  const code = await run(dir, [vitest, "run", test], (line) => {
    if (failedLine === "" && /(FAIL|RangeError|Maximum call stack)/.test(line))
      failedLine = line.trim();
    return false;
  });
  return code === 0
    ? { patch, caught: false, where: test, what: "the test passed" }
    : { patch, caught: true, where: test, what: `${failedLine || "failed"} (${why})` };
}

async function main(): Promise<void> {
  let values: { only?: string; seeds?: string; first?: string };
  try {
    values = parseArgs({
      options: { only: { type: "string" }, seeds: { type: "string" }, first: { type: "string" } },
      strict: true,
    }).values;
  } catch (error) {
    process.stderr.write(`mutation:defects: ${(error as Error).message.split("\n")[0]}\n`);
    process.exit(2);
  }
  const seeds = Number(values.seeds ?? 600);
  const first = Number(values.first ?? 1);
  if (!Number.isInteger(seeds) || seeds < 1 || !Number.isInteger(first) || first < 1) {
    process.stderr.write("mutation:defects: --seeds and --first must be positive integers\n");
    process.exit(2);
  }
  const only = values.only?.split(",").map((s) => s.trim());
  const patches = readdirSync(HERE)
    .filter((f) => f.endsWith(".patch"))
    .map((f) => f.slice(0, -".patch".length))
    .filter((p) => only === undefined || only.some((o) => p.startsWith(o)))
    .sort();
  const findings: Finding[] = [];
  for (const patch of patches) {
    const began = performance.now();
    const dir = copyTree();
    let finding: Finding;
    try {
      execFileSync("git", ["apply", join(HERE, `${patch}.patch`)], { cwd: dir, stdio: "pipe" });
      const unit = CAUGHT_BY_TEST[patch];
      finding =
        unit === undefined
          ? await simulate(dir, patch, first, seeds)
          : await unitTest(dir, patch, unit.test, unit.why);
    } catch (error) {
      finding = {
        patch,
        caught: false,
        where: "—",
        what: `does not apply: ${String((error as { stderr?: unknown }).stderr ?? error).trim()}`,
      };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    findings.push(finding);
    const s = ((performance.now() - began) / 1000).toFixed(0);
    process.stdout.write(
      `${finding.caught ? "caught" : "MISSED"} ${patch}: ${finding.where}: ${finding.what} (${s} s)\n`,
    );
  }
  const missed = findings.filter((f) => !f.caught);
  process.stdout.write(
    `${findings.length - missed.length} of ${findings.length} patches caught${missed.length > 0 ? `; missed: ${missed.map((f) => f.patch).join(", ")}` : ""}\n`,
  );
  process.exit(missed.length === 0 ? 0 : 1);
}

await main();
