/**
 * The first minutes of a new operator, with the real processes: Control started as `npm start`
 * starts it (on its embedded PostgreSQL), and the real `agentctl` binary.
 *
 * - As root, a data directory under a 0700 directory is refused at once with one line that
 *   names the directory, the reason and the fix; made enterable, the same directory works.
 * - Every line Control writes on stdout is a JSON log line, from start to drained stop.
 * - agentctl finds the operator token of the Control it talks to by itself, even when that
 *   Control keeps its data in a folder below `.data` (as the demo does).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAgentctl } from "../../agent-sim/demo/agentctl.js";
import { freePort } from "../helpers/process-fixtures.js";

const asRoot = process.getuid?.() === 0;

/** Starts `node --import tsx control/main.ts` with `env` over a clean environment. */
function spawnControl(env: Readonly<Record<string, string>>): {
  child: ChildProcess;
  output: { stdout: string; stderr: string };
  exited: Promise<number | null>;
} {
  const child = spawn(process.execPath, ["--import", "tsx", "control/main.ts"], {
    cwd: process.cwd(),
    env: { PATH: process.env.PATH ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output = { stdout: "", stderr: "" };
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
    output.stdout += chunk;
  });
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    output.stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once("close", resolve));
  return { child, output, exited };
}

describe("The newcomer's path, with a real Control and agentctl", { timeout: 180_000 }, () => {
  let base = "";
  let closed = "";
  let dataDir = "";
  let adminAddr = "";
  let control: ReturnType<typeof spawnControl> | undefined;

  beforeAll(async () => {
    base = await mkdtemp(join(tmpdir(), "newcomer-"));
    await chmod(base, 0o755);
    // A checkout or home directory only its owner may enter, holding `.data/demo`.
    closed = join(base, "home");
    await mkdir(closed, { mode: 0o700 });
    await chmod(closed, 0o700);
    dataDir = join(closed, ".data", "demo");
    adminAddr = `127.0.0.1:${await freePort()}`;
  });

  afterAll(async () => {
    if (control && control.child.exitCode === null) {
      control.child.kill("SIGTERM");
      await control.exited;
    }
    await rm(base, { recursive: true, force: true });
  });

  const env = () => ({
    AGENT_CONTROL_DATA_DIR: dataDir,
    AGENT_CONTROL_AGENT_ADDR: "127.0.0.1:0",
    AGENT_CONTROL_ADMIN_ADDR: adminAddr,
  });

  it.skipIf(!asRoot)(
    "as root, refuses a data dir under a 0700 directory at once: exit 2, one line naming it, no stack",
    async () => {
      const run = spawnControl(env());
      const code = await run.exited;
      expect(code).toBe(2);
      expect(run.output.stdout).toBe("");
      expect(run.output.stderr).toMatch(/^control: [^\n]+\n$/);
      expect(run.output.stderr).toContain(`cannot enter ${closed} (mode 0700)`);
      expect(run.output.stderr).toContain('runs as user "postgres"');
      expect(run.output.stderr).toContain(`chmod o+x ${closed}`);
      expect(run.output.stderr).not.toMatch(/\n\s+at /);
      expect(existsSync(join(dataDir, "postgres"))).toBe(false);
    },
  );

  it("starts there once the directory can be entered, writing only JSON lines on stdout", async () => {
    await chmod(closed, 0o711);
    control = spawnControl(env());
    const deadline = Date.now() + 120_000;
    let ready = false;
    while (!ready && Date.now() < deadline && control.child.exitCode === null) {
      ready = await fetch(`http://${adminAddr}/readyz`).then(
        (r) => r.ok,
        () => false,
      );
      if (!ready) await new Promise((r) => setTimeout(r, 250));
    }
    expect(ready, control.output.stderr).toBe(true);
    // The line that says where Control serves arrives just after it is ready.
    for (let i = 0; i < 40 && !control.output.stdout.includes("is serving agents"); i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(control.output.stdout).toContain("is serving agents");
  });

  it("agentctl finds that Control's operator token by its port, from the checkout or a folder below", async () => {
    const ctlEnv = {
      PATH: process.env.PATH ?? "",
      NO_COLOR: "1",
      AGENTCTL_SERVER: `http://${adminAddr}`,
    };
    const fromCheckout = await runAgentctl(["node", "list", "--json"], {
      env: ctlEnv,
      cwd: closed,
    });
    expect(fromCheckout.stderr).toBe("");
    expect(fromCheckout.code).toBe(0);
    expect(JSON.parse(fromCheckout.stdout)).toHaveProperty("nodes");
    await mkdir(join(closed, "docs"), { recursive: true });
    const fromBelow = await runAgentctl(["token", "list"], {
      env: ctlEnv,
      cwd: join(closed, "docs"),
    });
    expect(fromBelow.code).toBe(0);
    // Outside any checkout there is nothing to find: the refusal says where the token would be.
    const elsewhere = await runAgentctl(["node", "list"], { env: ctlEnv, cwd: base });
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.stderr).toContain("not authenticated");
  });

  it("drains on SIGTERM with exit 0, and every stdout line was a JSON log line", async () => {
    const running = control!;
    running.child.kill("SIGTERM");
    expect(await running.exited).toBe(0);
    const lines = running.output.stdout.split("\n").filter((line) => line !== "");
    expect(lines.length).toBeGreaterThan(3);
    const notJson = lines.filter((line) => {
      try {
        return typeof JSON.parse(line) !== "object";
      } catch {
        return true;
      }
    });
    expect(notJson).toEqual([]);
    const serving = lines.map((line) => JSON.parse(line)).find((e) => /is serving/.test(e.msg));
    expect(serving).toMatchObject({ level: 30, adminUrl: `http://${adminAddr}` });
    expect(lines.at(-1)).toContain('"msg":"stopped"');
  });
});
