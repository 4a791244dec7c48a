/**
 * A `--workers` Control whose embedded PostgreSQL cannot start (a cluster directory initdb did
 * not make) stops with one line saying why and exit status 2, as one process does, never a
 * stack trace.
 */
import { chown, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { runControl } from "../helpers/process-fixtures.js";

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

/** The uid the embedded server runs as: `postgres` as root, the user itself otherwise. */
async function serverUid(): Promise<number> {
  if (userInfo().uid !== 0) return userInfo().uid;
  const { execFileSync } = await import("node:child_process");
  return Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim());
}

it("a --workers Control whose database does not start exits 2 with one line, no stack trace", async () => {
  const dataDir = await mkdtemp(join(tmpdir(), "workers-start-failure-"));
  dirs.push(dataDir);
  const cluster = join(dataDir, "postgres");
  await mkdir(cluster);
  await writeFile(join(cluster, "PG_VERSION"), "not a cluster\n");
  const uid = await serverUid();
  await chown(cluster, uid, -1);
  await chown(join(cluster, "PG_VERSION"), uid, -1);

  const run = await runControl(["--workers", "2"], { AGENT_CONTROL_DATA_DIR: dataDir });

  expect(run.code).toBe(2);
  const lines = run.stderr.trim().split("\n");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^control: dataDir: .*embedded PostgreSQL server .* did not start/);
  expect(run.stderr).not.toMatch(/\n\s+at /);
});
