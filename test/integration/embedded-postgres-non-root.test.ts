/**
 * Control run as an unprivileged user (what docs/install.md's systemd unit does,
 * `User=agent-control`) starts on its embedded PostgreSQL, which then runs as that same
 * user; and a start that cannot work (a cluster another user owns) ends at once with one
 * line saying why and what to do, never a stack trace.
 *
 * The test needs root to make the user and to switch to it (`setpriv`).
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { chmod, chown, mkdir, mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../helpers/process-fixtures.js";

const asRoot = process.getuid?.() === 0;
const USER = "ac-pg-test";

/** The uid and gid of `name`, creating it as a system account when missing. */
function account(name: string): { uid: number; gid: number } {
  const id = (flag: string) => Number(execFileSync("id", [flag, name]).toString().trim());
  try {
    return { uid: id("-u"), gid: id("-g") };
  } catch {
    execFileSync("useradd", ["--system", "--user-group", "--no-create-home", name]);
    return { uid: id("-u"), gid: id("-g") };
  }
}

/** `node --import tsx control/main.ts` as `user`, with `env` over a clean environment. */
function spawnControlAs(
  user: string,
  env: Readonly<Record<string, string>>,
): { child: ChildProcess; output: { stdout: string; stderr: string }; exited: Promise<number> } {
  const child = spawn(
    "setpriv",
    [
      `--reuid=${user}`,
      `--regid=${user}`,
      "--clear-groups",
      process.execPath,
      "--import",
      "tsx",
      "control/main.ts",
    ],
    {
      cwd: process.cwd(),
      env: { PATH: process.env.PATH ?? "", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const output = { stdout: "", stderr: "" };
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
    output.stdout += chunk;
  });
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    output.stderr += chunk;
  });
  const exited = new Promise<number>((resolve) =>
    child.once("close", (code) => resolve(code ?? 1)),
  );
  return { child, output, exited };
}

async function until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !check(); ) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The real uid a process runs as (`/proc/PID/status`). */
async function uidOf(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  return Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]);
}

describe.skipIf(!asRoot)("Control as an unprivileged user", { timeout: 240_000 }, () => {
  let base = "";
  let dataDir = "";
  let user = { uid: -1, gid: -1 };
  let control: ReturnType<typeof spawnControlAs> | undefined;
  beforeAll(async () => {
    user = account(USER);
    base = await mkdtemp(join(tmpdir(), "pg-non-root-"));
    await chmod(base, 0o755);
    dataDir = join(base, "data");
    await mkdir(dataDir);
    await chown(dataDir, user.uid, user.gid);
  });
  afterAll(async () => {
    if (control && control.child.exitCode === null) {
      control.child.kill("SIGTERM");
      await control.exited;
    }
    await rm(base, { recursive: true, force: true });
  });

  const env = async () => ({
    AGENT_CONTROL_DATA_DIR: dataDir,
    AGENT_CONTROL_AGENT_ADDR: "127.0.0.1:0",
    AGENT_CONTROL_ADMIN_ADDR: `127.0.0.1:${await freePort()}`,
  });

  it("starts on the embedded PostgreSQL, which runs as that user, and stops cleanly", async () => {
    control = spawnControlAs(USER, await env());
    let code: number | undefined;
    void control.exited.then((c) => {
      code = c;
    });
    await until(
      () =>
        code !== undefined || (control?.output.stdout ?? "").includes("Agent Control is serving"),
      180_000,
      "Control to serve",
    );
    expect(control.output.stderr).toBe("");
    expect(code).toBeUndefined();
    const cluster = join(dataDir, "postgres");
    expect((await stat(cluster)).uid).toBe(user.uid);
    const postmaster = Number(
      (await readFile(join(cluster, "postmaster.pid"), "utf8")).split("\n")[0],
    );
    expect(await uidOf(postmaster)).toBe(user.uid);
    const secret = await stat(join(dataDir, "postgres-password"));
    expect(secret.uid).toBe(user.uid);
    expect(secret.mode & 0o777).toBe(0o600);

    control.child.kill("SIGTERM");
    expect(await control.exited).toBe(0);
    control = undefined;
  });

  it("refuses a cluster another user owns at once: one line naming it and the fix, no stack", async () => {
    // As a Control once run as root leaves it: the cluster belongs to the server's user.
    const cluster = join(dataDir, "postgres");
    execFileSync("chown", ["-R", "nobody", cluster]);
    try {
      const run = spawnControlAs(USER, await env());
      control = run;
      const code = await run.exited;
      control = undefined;
      expect(code).toBe(2);
      const lines = run.output.stderr.trimEnd().split("\n");
      expect(lines, run.output.stderr).toHaveLength(1);
      expect(lines[0]).toContain(cluster);
      expect(lines[0]).toMatch(/chown -R/);
      expect(run.output.stderr).not.toMatch(/^\s+at /m);
    } finally {
      execFileSync("chown", ["-R", `${user.uid}:${user.gid}`, cluster]);
    }
  });
});
