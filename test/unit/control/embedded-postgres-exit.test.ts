/**
 * Loading `embedded-postgres` must leave the process's exit status alone: its exit hook ends
 * the process with status 0 from `beforeExit`, which turned a failing test run (vitest sets
 * `process.exitCode = 1` and lets the loop drain) into a passing one.
 */
import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "..", "..", "..");
const TSX = resolve(ROOT, "node_modules", ".bin", "tsx");

function exitStatusAfterLoading(exitCode: number): number | null {
  const script = `
    import { loadEmbeddedPostgres } from "./control/db/embedded-postgres.ts";
    await loadEmbeddedPostgres();
    process.exitCode = ${exitCode};
  `;
  const run = spawnSync(TSX, ["--input-type=module", "-e", script], {
    cwd: ROOT,
    encoding: "utf8",
    timeout: 30_000,
  });
  return run.status;
}

describe("loading embedded-postgres", () => {
  it("keeps a failing process's exit status (1 stays 1 when the loop drains)", () => {
    expect(exitStatusAfterLoading(1)).toBe(1);
  });

  it("keeps a successful process's exit status", () => {
    expect(exitStatusAfterLoading(0)).toBe(0);
  });
});
