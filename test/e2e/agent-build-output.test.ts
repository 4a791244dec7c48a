/**
 * `npm run agent:build` as an operator runs it: a missing or unusable output directory is
 * refused at once with one line naming it (before the half-minute build, writing nothing), a
 * build says what it is doing on stderr while it runs, and the artifact's own `--help`
 * names the command that runs it (the single executable's path, or `node agent.mjs`),
 * never `npm`, which the node may not have.
 */
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, "../..");
const TSX = join(ROOT, "node_modules/.bin/tsx");
const BUILD = join(ROOT, "agent/build-main.ts");

interface Result {
  code: number | undefined;
  stdout: string;
  stderr: string;
  ms: number;
}

async function build(args: readonly string[]): Promise<Result> {
  const started = Date.now();
  return await run(TSX, [BUILD, ...args], { cwd: ROOT }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr, ms: Date.now() - started }),
    (error: { code?: number; stdout?: string; stderr?: string }) => ({
      code: error.code,
      stdout: error.stdout ?? "",
      stderr: error.stderr ?? "",
      ms: Date.now() - started,
    }),
  );
}

describe("agent:build's output path, progress and the artifact's help", () => {
  let dir = "";

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "agent-build-out-"));
  });

  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("refuses an --out whose directory does not exist at once, in one line naming it, and builds nothing", async () => {
    const missing = join(dir, "rel", "1.2.1");
    const result = await build([
      "--version",
      "1.2.1",
      "--executable",
      "--out",
      join(missing, "agent-linux-amd64"),
    ]);
    expect(result.code).toBe(2);
    const lines = result.stderr.trimEnd().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`${missing} does not exist`);
    expect(lines[0]).not.toMatch(/ENOENT/);
    // Refused before building: no bundling, no single-executable work.
    expect(result.ms).toBeLessThan(15_000);
    expect(await readdir(dir)).toEqual([]);
  }, 60_000);

  it("refuses an --out that is a directory, or whose parent is a file", async () => {
    await mkdir(join(dir, "a-dir"));
    await writeFile(join(dir, "a-file"), "x");
    const intoDir = await build(["--version", "1.2.1", "--out", join(dir, "a-dir")]);
    expect(intoDir.code).toBe(2);
    expect(intoDir.stderr).toContain(`${join(dir, "a-dir")} is a directory`);
    const underFile = await build(["--version", "1.2.1", "--out", join(dir, "a-file", "agent")]);
    expect(underFile.code).toBe(2);
    expect(underFile.stderr).toContain(`${join(dir, "a-file")} is not a directory`);
  }, 60_000);

  it("says what it does while it builds, and the bundle's help names node and the file, not npm", async () => {
    const out = join(dir, "agent.mjs");
    const result = await build(["--version", "1.2.1", "--out", out]);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/^agent:build: bundling 1\.2\.1 for \S+/m);
    expect(JSON.parse(result.stdout)).toMatchObject({ file: out, kind: "module" });
    const { stdout } = await run(process.execPath, [out, "--help"]);
    expect(stdout).toContain(`  node ${out} run --install-dir DIR`);
    expect(stdout).not.toMatch(/npm/);
  }, 120_000);

  it("reports each step of a single-executable build, and the executable's help names its own path", async () => {
    const out = join(dir, "agent");
    const result = await build(["--version", "1.2.1", "--executable", "--out", out]);
    expect(result.code).toBe(0);
    const steps = result.stderr.trimEnd().split("\n");
    expect(steps.length).toBeGreaterThanOrEqual(3);
    expect(steps[0]).toMatch(/^agent:build: bundling 1\.2\.1/);
    expect(result.stderr).toMatch(/^agent:build: .*single executable/m);
    expect(steps[steps.length - 1]).toBe(
      `agent:build: wrote ${out} in ${steps[steps.length - 1]?.match(/in (\d+\.\d) s$/)?.[1]} s`,
    );
    const { stdout } = await run(out, ["--help"], { env: { PATH: "/nonexistent" } });
    expect(stdout).toContain(`  ${out} run --install-dir DIR`);
    expect(stdout).toContain(`  ${out} status --install-dir DIR`);
    expect(stdout).not.toMatch(/npm/);
  }, 300_000);

  it("keeps npm run agent in the help of the Agent run from source", async () => {
    const { stdout } = await run(TSX, [join(ROOT, "agent/main.ts"), "--help"], { cwd: ROOT });
    expect(stdout).toContain("  npm run agent -- run --install-dir DIR");
  }, 60_000);
});
