/**
 * The built Control (`npm run build` → dist/control.mjs) as production runs it: `node
 * dist/control.mjs`, one process, no tsx launcher, so the pid systemd holds as `$MAINPID` is
 * Control itself. It starts on its embedded PostgreSQL, serves the admin API, the dashboard
 * and its build info, reloads the admin tokens file on SIGHUP (`ExecReload=/bin/kill -HUP
 * $MAINPID`) and drains on SIGTERM, stopping the database. The shipped unit runs it so, and
 * `systemd-analyze verify` accepts the unit. Under `--workers 2` the bundle reloads in every
 * worker on SIGHUP to the primary and drains them all on SIGTERM to the primary alone.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { copyFile, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../helpers/process-fixtures.js";
import {
  alive,
  listNodesStatus,
  startWorkers,
  type WorkersProcess,
} from "../helpers/workers-process.js";

const run = promisify(execFile);
const BUNDLE = resolve("dist", "control.mjs");
const OPERATOR = "bundle-operator-token-0123456789";
const OLD = "bundle-old-token-0123456789abcdef";
const NEW = "bundle-new-token-0123456789abcdef";

beforeAll(async () => {
  // What `npm run build` runs.
  await run(process.execPath, ["control/build.mjs", "--quiet"], { cwd: process.cwd() });
}, 120_000);

describe("npm run build: dist/control.mjs run by node alone", { timeout: 180_000 }, () => {
  let dir = "";
  let tokensFile = "";
  let adminUrl = "";
  let child: ChildProcess | undefined;
  let exited: Promise<number | null>;
  let stdout = "";
  let stderr = "";
  let postgresPid: number | undefined;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "agent-control-bundle-"));
    tokensFile = join(dir, "admin-tokens.json");
    await writeFile(tokensFile, JSON.stringify([{ name: "ci-old", role: "viewer", token: OLD }]), {
      mode: 0o600,
    });
    const [agentPort, adminPort, downloadsPort] = [
      await freePort(),
      await freePort(),
      await freePort(),
    ];
    adminUrl = `http://127.0.0.1:${adminPort}`;
    // Only PATH: nothing of the test run's environment (tsx's loader included) comes along.
    child = spawn(process.execPath, [BUNDLE], {
      cwd: tmpdir(),
      env: {
        PATH: process.env.PATH ?? "",
        AGENT_CONTROL_ADMIN_TOKEN: OPERATOR,
        AGENT_CONTROL_ADMIN_TOKENS_FILE: tokensFile,
        AGENT_CONTROL_AGENT_ADDR: `127.0.0.1:${agentPort}`,
        AGENT_CONTROL_ADMIN_ADDR: `127.0.0.1:${adminPort}`,
        AGENT_CONTROL_DOWNLOADS_ADDR: `127.0.0.1:${downloadsPort}`,
        AGENT_CONTROL_DATA_DIR: dir,
        AGENT_CONTROL_LOG_LEVEL: "info",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    const proc = child;
    exited = new Promise((r) => proc.once("exit", (code) => r(code)));
    const deadline = Date.now() + 120_000;
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`exited at start:\n${stdout}\n${stderr}`);
      const ok = await fetch(`${adminUrl}/readyz`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) break;
      if (Date.now() > deadline) throw new Error(`not ready:\n${stdout}\n${stderr}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const pidFile = join(dir, "postgres", "postmaster.pid");
    postgresPid = Number.parseInt(readFileSync(pidFile, "utf8").split("\n")[0] ?? "", 10);
  }, 180_000);

  afterAll(async () => {
    if (child && child.exitCode === null) child.kill("SIGKILL");
    if (postgresPid !== undefined && alive(postgresPid)) process.kill(postgresPid, "SIGKILL");
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("is one process running the bundle, that serves the admin API, the dashboard and its version", async () => {
    const pid = child?.pid as number;
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
    expect(cmdline).toEqual([process.execPath, BUNDLE]);
    expect(stdout).toContain(`"pid":${pid}`);
    expect(await listNodesStatus(adminUrl, OPERATOR)).toBe(200);
    const metrics = await (await fetch(`${adminUrl}/metrics`)).text();
    const { version } = JSON.parse(readFileSync("package.json", "utf8")) as { version: string };
    expect(metrics).toContain(`agent_control_build_info{version="${version}"`);
    const page = await (await fetch(`${adminUrl}/ui/`)).text();
    const script = /src="([^"]*main-[0-9a-f]+\.js)"/.exec(page)?.[1];
    expect(script, page).toBeDefined();
    const js = await fetch(new URL(script as string, `${adminUrl}/ui/`));
    expect(js.status).toBe(200);
    expect((await js.text()).length).toBeGreaterThan(1000);
  });

  it("reloads the admin tokens file on SIGHUP to its pid", async () => {
    expect(await listNodesStatus(adminUrl, OLD)).toBe(200);
    expect(await listNodesStatus(adminUrl, NEW)).toBe(401);
    await writeFile(tokensFile, JSON.stringify([{ name: "ci-new", role: "viewer", token: NEW }]));
    child?.kill("SIGHUP");
    const deadline = Date.now() + 20_000;
    while (!stdout.includes('"msg":"admin tokens reloaded"')) {
      if (Date.now() > deadline) throw new Error(`no reload:\n${stdout}\n${stderr}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(await listNodesStatus(adminUrl, NEW)).toBe(200);
    expect(await listNodesStatus(adminUrl, OLD)).toBe(401);
    expect(child?.exitCode).toBeNull();
  });

  it("drains on SIGTERM, stops its database and exits 0", async () => {
    child?.kill("SIGTERM");
    expect(await exited, stderr).toBe(0);
    expect(stdout).toContain('"msg":"shutting down: draining agent streams"');
    expect(stdout).toContain('"msg":"stopped"');
    expect(alive(postgresPid as number)).toBe(false);
    expect(existsSync(join(dir, "postgres", "postmaster.pid"))).toBe(false);
    expect(stderr).toBe("");
  });
});

describe("dist/control.mjs --workers 2 (the unit's drop-in for several Controls)", {
  timeout: 240_000,
}, () => {
  let dir = "";
  let w: WorkersProcess | undefined;
  afterAll(async () => {
    if (w?.child.pid && w.child.exitCode === null) {
      try {
        process.kill(-w.child.pid, "SIGKILL");
      } catch {}
    }
    const pg = w?.postgresPid();
    if (pg !== undefined && alive(pg)) process.kill(pg, "SIGKILL");
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("reloads in every worker on SIGHUP to the primary and drains all on SIGTERM to it alone (KillMode=mixed)", async () => {
    dir = await mkdtemp(join(tmpdir(), "agent-control-bundle-workers-"));
    const tokensFile = join(dir, "admin-tokens.json");
    await writeFile(tokensFile, JSON.stringify([{ name: "ci-old", role: "viewer", token: OLD }]), {
      mode: 0o600,
    });
    w = await startWorkers({
      dir,
      workers: 2,
      config: { adminTokensFile: tokensFile, limits: { shutdownGraceSeconds: 1 } },
      env: { AGENT_CONTROL_ADMIN_TOKEN: OPERATOR },
      entry: ["--enable-source-maps", BUNDLE],
    });
    const workers = w.started();
    await writeFile(tokensFile, JSON.stringify([{ name: "ci-new", role: "viewer", token: NEW }]));
    process.kill(w.child.pid as number, "SIGHUP");
    const reloaded = () =>
      w?.lines().filter((l) => l.msg === "admin tokens reloaded in every worker");
    await w.until("the reload", 30_000, () => (reloaded()?.length ?? 0) > 0);
    expect([...((reloaded()?.[0]?.workers as number[]) ?? [])].sort()).toEqual([...workers].sort());
    for (let i = 0; i < 4; i++) expect(await listNodesStatus(w.adminUrl, NEW)).toBe(200);
    const postgres = w.postgresPid() as number;
    process.kill(w.child.pid as number, "SIGTERM");
    expect(await w.exited, w.stderr()).toEqual({ code: 0, signal: null });
    for (const pid of workers) {
      expect(alive(pid)).toBe(false);
      expect(w.lines().filter((l) => l.pid === pid && l.msg === "stopped")).toHaveLength(1);
    }
    expect(alive(postgres)).toBe(false);
    expect(w.stderr()).toBe("");
  });
});

describe("the shipped unit docs/systemd/agent-control.service", () => {
  const unitPath = resolve("docs", "systemd", "agent-control.service");
  /** Every `Key=value` of the unit, in order. */
  const fields = () =>
    readFileSync(unitPath, "utf8")
      .split("\n")
      .filter((line) => /^[A-Za-z]+=/.test(line))
      .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]);
  const field = (key: string) =>
    fields()
      .filter(([k]) => k === key)
      .map(([, v]) => v);

  it("is accepted by systemd-analyze verify, with no warning", async () => {
    const dir = await mkdtemp(join(tmpdir(), "agent-control-unit-"));
    try {
      await copyFile(unitPath, join(dir, "agent-control.service"));
      const result = await run("systemd-analyze", [
        "verify",
        join(dir, "agent-control.service"),
      ]).then(
        (r) => ({ code: 0, out: r.stdout + r.stderr }),
        (e: { code: number; stdout: string; stderr: string }) => ({
          code: e.code,
          out: e.stdout + e.stderr,
        }),
      );
      expect(result).toEqual({ code: 0, out: "" });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("runs the bundle with node directly, reloads with SIGHUP to $MAINPID and lets Control stop its own processes", async () => {
    const [start] = field("ExecStart");
    expect(field("ExecStart")).toHaveLength(1);
    expect(start?.split(/\s+/)).toEqual([
      "/usr/bin/node",
      "--enable-source-maps",
      "/opt/agent-control/dist/control.mjs",
    ]);
    expect(start).not.toContain("tsx");
    expect(field("ExecReload")).toEqual(["/bin/kill -HUP $MAINPID"]);
    expect(field("Type")).toEqual(["exec"]);
    // SIGTERM to the main process only (the primary drains its workers, then stops the
    // database); SIGKILL to whatever remains of the group after TimeoutStopSec.
    expect(field("KillMode")).toEqual(["mixed"]);
    expect(field("KillSignal")).toEqual(["SIGTERM"]);
    expect(field("WorkingDirectory")).toEqual(["/opt/agent-control"]);
    expect(await readFile(unitPath, "utf8")).toContain("npm run build");
  });
});
