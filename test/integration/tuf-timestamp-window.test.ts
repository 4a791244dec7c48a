/**
 * The TUF timestamp window is fixed per timestamp key, through a real Control on a real
 * database: the timestamp version counts windows since the epoch, so a Control that signed
 * with another window under the same key would move the version back and every Agent would
 * refuse it (a fleet frozen by a configuration change). The first Control records its window;
 * a later one with another window (a lengthened window, or a second Control of the fleet)
 * refuses to start with one line naming the setting, and records nothing; a new timestamp
 * key may bring a new window.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError } from "../../control/config.js";
import type { ConfigInput } from "../../control/config-reader.js";
import { startTestControl } from "../helpers/control.js";
import { createTestDatabase, type TestDatabase } from "../helpers/database.js";
import { runCli } from "../unit/cli/run-cli.js";

const DAY = 86_400;

describe("tuf.timestampWindowSeconds against the window the fleet recorded", {
  timeout: 120_000,
}, () => {
  let dir = "";
  let database: TestDatabase;

  const keygen = async (name: string) => {
    const out = join(dir, `${name}.key`);
    const result = await runCli(["release", "keygen", "--out", out]);
    if (result.code !== 0) throw new Error(result.stderr);
    return out;
  };
  const tuf = (timestampKey: string, windowSeconds: number) => ({
    tuf: {
      dir: join(dir, "repo"),
      snapshotKey: join(dir, "snapshot.key"),
      timestampKey,
      timestampExpirySeconds: 7 * DAY,
      timestampWindowSeconds: windowSeconds,
    },
  });
  /** Starts and stops a Control on the shared database; the error it refused with, if any. */
  const startWith = async (config: ConfigInput): Promise<unknown> => {
    try {
      const tc = await startTestControl({ database, config });
      await tc.stop();
      return undefined;
    } catch (error) {
      return error;
    }
  };
  const recorded = async (): Promise<string[]> => {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ value: string }>(
        "select value from fleet_settings where name like 'tuf.timestampWindowSeconds:%' order by value",
      );
      return rows.map((r) => r.value);
    } finally {
      await client.end();
    }
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "tuf-window-"));
    await mkdir(join(dir, "repo"));
    // Control checks only that the repository files exist at start; nothing is served here.
    await writeFile(join(dir, "repo", "root.json"), "{}");
    await writeFile(join(dir, "repo", "targets.json"), "{}");
    await keygen("snapshot");
    await keygen("timestamp");
    await keygen("timestamp2");
    database = await createTestDatabase("tufwindow");
  }, 60_000);
  afterAll(async () => {
    await database?.drop();
    await rm(dir, { recursive: true, force: true });
  });

  it("records the first window, refuses a longer one under the same key, takes a new key's", async () => {
    const first = join(dir, "timestamp.key");
    expect(await startWith(tuf(first, 3600))).toBeUndefined();
    expect(await recorded()).toEqual(["3600"]);
    // The same window again (a restart, or another Control configured alike) starts.
    expect(await startWith(tuf(first, 3600))).toBeUndefined();

    // Lengthening the window under the same key: refused before anything is signed.
    const refused = await startWith(tuf(first, DAY));
    expect(refused).toBeInstanceOf(ConfigError);
    const problems = (refused as ConfigError).problems;
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^tuf\.timestampWindowSeconds: 86400 is not 3600, /);
    expect(problems[0]).toContain("new timestamp key");
    expect(problems[0]).not.toContain("\n");
    // A shorter one too: a window is fixed, not only bounded below.
    expect(await startWith(tuf(first, 600))).toBeInstanceOf(ConfigError);
    expect(await recorded()).toEqual(["3600"]);

    // A new timestamp key (rotated in root) starts its versions afresh: its own window.
    expect(await startWith(tuf(join(dir, "timestamp2.key"), DAY))).toBeUndefined();
    expect(await recorded()).toEqual(["3600", "86400"]);
  });
});
