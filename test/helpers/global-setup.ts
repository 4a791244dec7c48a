/**
 * Starts one PostgreSQL server for the whole test run (or uses `DATABASE_URL`), and
 * provides its admin URL to the test files; each file creates databases of its own. Also makes
 * the run's directory of built Agent artifacts (`AGENT_CONTROL_TEST_BUILDS`), so test files
 * that need the same version built alike build it once per run (the sources do not change
 * during a run).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { startEmbeddedPostgres } from "../../control/db/embedded-postgres.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** URL of a PostgreSQL database whose user may create databases. */
    adminDatabaseUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const builds = await mkdtemp(join(tmpdir(), "agent-control-test-builds-"));
  process.env.AGENT_CONTROL_TEST_BUILDS = builds;
  const removeBuilds = () => rm(builds, { recursive: true, force: true });
  const external = process.env.DATABASE_URL;
  if (external) {
    project.provide("adminDatabaseUrl", external);
    return removeBuilds;
  }
  const dataDir = await mkdtemp(join(tmpdir(), "agent-control-test-"));
  const db = await startEmbeddedPostgres({ dataDir, database: "postgres" });
  project.provide("adminDatabaseUrl", db.url);
  return async () => {
    await db.stop();
    await rm(dataDir, { recursive: true, force: true });
    await removeBuilds();
  };
}
