/**
 * CI wrapper of `npm run bench -- --quick`: runs the quick benchmark (N = 1,000, a real
 * Control on the embedded PostgreSQL against the bare grpc-js baseline, simulators in their
 * own processes) and holds Control to the bounds of its ratios. Wall-clock times are never
 * asserted: this machine is shared and noisy; only ratios measured in the same run are.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "..", "..");

interface Row {
  scenario: string;
  n: number;
  project: number | null;
  ratio: number | null;
  maxRatio?: number;
  pending?: string;
  spread?: { min: number | null; max: number | null; runs: number };
}

describe("npm run bench -- --quick", () => {
  let out: string | undefined;
  afterAll(async () => {
    if (out) await rm(out, { recursive: true, force: true });
  });

  it("keeps every Control/baseline ratio within its bound", async () => {
    out = await mkdtemp(join(tmpdir(), "bench-quick-test-"));
    const child = spawn(
      process.execPath,
      [
        join(ROOT, "node_modules", "tsx", "dist", "cli.mjs"),
        "agent-sim/bench/main.ts",
        "--quick",
        "--out",
        out,
      ],
      { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] },
    );
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    const code = await new Promise<number | null>((r) => child.once("exit", (c) => r(c)));
    expect(existsSync(join(out, "benchmarks-quick.json")), `bench exited ${code}:\n${output}`).toBe(
      true,
    );
    const report = JSON.parse(await readFile(join(out, "benchmarks-quick.json"), "utf8")) as {
      rows: Row[];
    };
    const bounded = report.rows.filter((r) => r.maxRatio !== undefined);
    expect(bounded.length, output).toBeGreaterThanOrEqual(3);
    for (const row of bounded) {
      expect(row.ratio, `${row.scenario} (N=${row.n})\n${output}`).not.toBeNull();
      expect(row.spread?.runs ?? 0, `spread of ${row.scenario} (N=${row.n})`).toBeGreaterThan(0);
      expect(row.ratio as number, `${row.scenario} (N=${row.n})`).toBeLessThanOrEqual(
        row.maxRatio as number,
      );
    }
    // The storm is bounded against the bare server's with the same downtime, not by its
    // peak-to-mean (the agents' jittered backoff shapes that one).
    expect(bounded.map((r) => r.scenario)).toContain(
      "reconnect storm: serving again → every agent online again",
    );
    expect(code, output).toBe(0);
  }, 240_000);
});
