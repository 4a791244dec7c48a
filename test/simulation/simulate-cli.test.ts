/**
 * `npm run simulate` as a user runs it: a real process, its exit codes and what it prints.
 */
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { failureReport } from "../../simulation/check-seed.js";
import { runSeed } from "../../simulation/run.js";

function simulate(...args: string[]) {
  return spawnSync(process.execPath, ["--import", "tsx", "simulation/main.ts", ...args], {
    encoding: "utf8",
    timeout: 120_000,
  });
}

describe("npm run simulate", () => {
  it("runs the seeds it is given and ends with a summary, exit 0", () => {
    const r = simulate("--seed", "7", "--campaigns", "3");
    expect(r.status).toBe(0);
    expect(r.stdout.trim().split("\n").at(-1)).toMatch(
      /^3 passed, 0 failed \(seeds 7…9, \d+ campaigns/,
    );
  });

  it("replays a seed exactly: the same trace twice", () => {
    const a = simulate("--seed", "12", "--campaigns", "1", "--trace");
    const b = simulate("--seed", "12", "--campaigns", "1", "--trace");
    expect(a.status).toBe(0);
    expect(a.stdout.split("\n").length).toBeGreaterThan(20);
    expect(a.stdout.replace(/, [\d.]+ s\)/, "")).toBe(b.stdout.replace(/, [\d.]+ s\)/, ""));
  });

  it.each([
    [["--campaigns", "many"], /^simulate: --campaigns must be a non-negative integer, got "many"$/],
    [["--seed", "-3"], /^simulate: .*--seed/],
    [["--bogus"], /^simulate: .*bogus/],
  ])("refuses %j with exit 2 and one line naming it", (args, message) => {
    const r = simulate(...args);
    expect(r.status).toBe(2);
    const lines = r.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(message);
  });

  it("reports a broken invariant with its step, the invariant, the trace and the replay command", async () => {
    const run = await runSeed(3, { faults: false });
    const report = failureReport({
      ...run,
      violation: { step: 12, at: 4500, message: "c0: I1: batch 1 passed with 2 of 10 failed" },
    });
    expect(report).toContain("seed 3 (no faults) broke an invariant at step 12, t=4.500s:");
    expect(report).toContain("  c0: I1: batch 1 passed with 2 of 10 failed");
    expect(report).toContain("trace (last lines):");
    expect(report.split("\n").at(-1)).toBe(
      "replay: npm run simulate -- --seed 3 --campaigns 1 --trace",
    );
  });
});
