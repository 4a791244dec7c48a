/**
 * Control as a child process (`tsx control/main.ts`, as the demo and the bench run it) on
 * its embedded PostgreSQL: kill() ends Control itself, not only tsx's launcher, and leaves
 * the database server to be adopted; stop() drains and stops that server too.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ControlProcess, startControlProcess } from "../../agent-sim/demo/control-process.js";
import { freePort } from "../../control/db/embedded-postgres.js";

const run = promisify(execFile);

/** Pids of the processes whose command line names `text`. */
async function processesNaming(text: string): Promise<number[]> {
  const { stdout } = await run("ps", ["-A", "-o", "pid=,args="]);
  return stdout
    .split("\n")
    .filter((line) => line.includes(text))
    .map((line) => Number.parseInt(line.trim(), 10));
}

/** Whether something accepts TCP connections on `address` (`host:port`). */
async function accepting(address: string): Promise<boolean> {
  const [host, port] = address.split(":");
  return await new Promise((resolve) => {
    const socket = connect({ host, port: Number(port) });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("Control as a child process on its embedded PostgreSQL", { timeout: 150_000 }, () => {
  let dataDir = "";
  let agentAddr = "";
  let adminAddr = "";
  let control: ControlProcess | undefined;
  const start = () =>
    startControlProcess({
      dataDir,
      agentAddr,
      adminAddr,
      config: {},
      // Empty counts as unset: Control starts its embedded PostgreSQL under the data dir.
      env: { DATABASE_URL: "" },
      readyTimeoutMs: 120_000,
    });
  const postmasterPid = async () =>
    Number.parseInt(await readFile(join(dataDir, "postgres", "postmaster.pid"), "utf8"), 10);

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "agent-control-process-"));
    agentAddr = `127.0.0.1:${await freePort()}`;
    adminAddr = `127.0.0.1:${await freePort()}`;
  });

  afterAll(async () => {
    await control?.kill();
    const pid = await postmasterPid().catch(() => 0);
    if (pid > 0 && alive(pid)) process.kill(pid, "SIGINT");
    for (let waited = 0; waited < 20_000 && pid > 0 && alive(pid); waited += 100) {
      await new Promise((r) => setTimeout(r, 100));
    }
    await rm(dataDir, { recursive: true, force: true });
  });

  it("kill() leaves no Control process and no listener, and the embedded PostgreSQL running", async () => {
    control = await start();
    const configFile = join(dataDir, "config.json");
    // tsx's launcher and the Node.js process it runs Control in.
    expect(await processesNaming(configFile)).toHaveLength(2);
    expect(await accepting(agentAddr)).toBe(true);
    const postgres = await postmasterPid();

    await control.kill();

    expect(await processesNaming(configFile)).toEqual([]);
    expect(await accepting(agentAddr)).toBe(false);
    expect(await accepting(adminAddr)).toBe(false);
    expect(alive(postgres)).toBe(true);
  });

  it("a Control started after kill() adopts that PostgreSQL; stop() drains, exits 0 and stops it", async () => {
    const postgres = await postmasterPid();
    control = await start();
    expect(await postmasterPid()).toBe(postgres);
    expect(await control.stop()).toBe(0);
    expect(await processesNaming(join(dataDir, "config.json"))).toEqual([]);
    expect(alive(postgres)).toBe(false);
  });
});
