import { mkdir, mkdtemp, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveConnection } from "../../../cli/client.js";
import { findLocalDataDir } from "../../../cli/local-control.js";

describe("findLocalDataDir: the data directory of the Control on a local port", () => {
  let repo = "";
  const live = new Set([101, 102, 103]);
  const alive = (pid: number) => live.has(pid);
  const note = async (dir: string, url: string, pid: number, mtime: number) => {
    await mkdir(dir, { recursive: true });
    const file = join(dir, "admin-endpoint.json");
    await writeFile(file, JSON.stringify({ url, pid }));
    await utimes(file, mtime, mtime);
  };

  beforeAll(async () => {
    repo = await mkdtemp(join(tmpdir(), "agentctl-local-"));
    // `npm start` earlier on 7080 (its process gone), the demo now on 7080, a second Control on 7090.
    await note(join(repo, ".data"), "http://127.0.0.1:7080", 999, 1000);
    await note(join(repo, ".data", "demo"), "http://127.0.0.1:7080", 101, 2000);
    await note(join(repo, ".data", "other"), "http://127.0.0.1:7090", 102, 3000);
    await note(join(repo, ".data", "older"), "http://127.0.0.1:7090", 103, 500);
    await mkdir(join(repo, "cli", "commands"), { recursive: true });
    await writeFile(join(repo, ".data", "demo", "admin-token"), "demo-operator-token-0123456789\n");
  });
  afterAll(async () => {
    await rm(repo, { recursive: true, force: true });
  });

  it("picks the live Control noted for the server's port", () => {
    expect(findLocalDataDir("http://127.0.0.1:7080", { cwd: repo, alive })).toBe(".data/demo");
    expect(findLocalDataDir("http://localhost:7090", { cwd: repo, alive })).toBe(".data/other");
  });

  it("searches from a folder below the checkout, answering with an absolute path", () => {
    expect(
      findLocalDataDir("http://127.0.0.1:7080", { cwd: join(repo, "cli", "commands"), alive }),
    ).toBe(join(repo, ".data", "demo"));
  });

  it("falls back to .data when no live Control noted the port", () => {
    expect(findLocalDataDir("http://127.0.0.1:7080", { cwd: repo, alive: () => false })).toBe(
      ".data",
    );
    expect(findLocalDataDir("http://127.0.0.1:9999", { cwd: repo, alive })).toBe(".data");
  });

  it("answers .data where no .data folder exists", async () => {
    const empty = await mkdtemp(join(tmpdir(), "agentctl-empty-"));
    try {
      expect(findLocalDataDir("http://127.0.0.1:7080", { cwd: empty, alive })).toBe(".data");
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });

  it("gives resolveConnection the token file of that data directory; AGENT_CONTROL_DATA_DIR still wins", () => {
    const read = (path: string) =>
      path === ".data/demo/admin-token" ? "demo-token-0123456789" : undefined;
    const findDataDir = (server: string) => findLocalDataDir(server, { cwd: repo, alive });
    expect(resolveConnection({ env: {}, readToken: read, findDataDir })).toMatchObject({
      dataDir: ".data/demo",
      token: "demo-token-0123456789",
      tokenSource: "file",
    });
    expect(
      resolveConnection({
        env: { AGENT_CONTROL_DATA_DIR: "/srv/data" },
        readToken: read,
        findDataDir,
      }),
    ).toMatchObject({ dataDir: "/srv/data", tokenSource: "none" });
  });
});
