/**
 * Gives each test a fresh, empty PostgreSQL database on the run's shared server.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { inject } from "vitest";

/** A database made for one test; `drop()` removes it. */
export interface TestDatabase {
  readonly url: string;
  readonly name: string;
  drop(): Promise<void>;
}

/** Creates an empty database named after `label` with a random suffix. */
export async function createTestDatabase(label = "t"): Promise<TestDatabase> {
  const adminUrl = inject("adminDatabaseUrl");
  const name = `${label
    .replace(/[^a-z0-9_]/gi, "_")
    .toLowerCase()
    .slice(0, 30)}_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    async drop() {
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}
