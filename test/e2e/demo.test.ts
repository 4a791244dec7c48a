import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { freePort } from "../../control/db/embedded-postgres.js";

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, "..", "..");

describe("npm run demo (short mode)", () => {
  it("runs the story end to end: the good campaign completes, the bad one is rolled back", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "agent-control-demo-"));
    try {
      const [agentPort, adminPort] = [await freePort(), await freePort()];
      const { stdout } = await run(
        process.execPath,
        [
          join(ROOT, "node_modules", "tsx", "dist", "cli.mjs"),
          join(ROOT, "agent-sim", "demo", "main.ts"),
          "--exit",
          "--count",
          "60",
          "--batch-seconds",
          "2",
          "--agent-addr",
          `127.0.0.1:${agentPort}`,
          "--admin-addr",
          `127.0.0.1:${adminPort}`,
          "--data-dir",
          dataDir,
        ],
        { cwd: ROOT, timeout: 240_000, maxBuffer: 64 * 1024 * 1024 },
      );
      expect(stdout).toMatch(/ended completed/);
      expect(stdout).toMatch(/ended rolled_back/);
      expect(stdout).toMatch(
        /Demo finished: the first campaign completed, the bad one was rolled back/,
      );
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 300_000);
});
