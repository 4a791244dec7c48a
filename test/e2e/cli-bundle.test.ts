/**
 * agentctl as users install it: the ahead-of-time bundle (cli/build.mjs) packed with
 * `npm pack`, installed globally into a temporary prefix with `npm install -g --offline` (the
 * package has no dependencies, so nothing is fetched), and run from a directory outside the
 * repository against a real Control.
 */
import { execFile, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, symlink } from "node:fs/promises";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { startTestControl, type TestControl } from "../helpers/control.js";

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, "..", "..");
const VERSION = (
  JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }
).version;

interface Result {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

describe("the packed, globally installed agentctl", { timeout: 120_000 }, () => {
  let tc: TestControl;
  let dir: string;
  let bin: string;
  let env: Record<string, string>;

  /** Runs the installed agentctl from `dir` (outside the repository) with `env` only. */
  const agentctl = (args: string[], extra: Record<string, string> = {}): Promise<Result> =>
    new Promise((done) => {
      const started = performance.now();
      const child = spawn(bin, args, {
        cwd: dir,
        env: { ...env, ...extra },
        stdio: ["ignore", "pipe", "pipe"],
        timeout: 60_000,
      });
      let stdout = "";
      let stderr = "";
      child.stdout.setEncoding("utf8").on("data", (c: string) => {
        stdout += c;
      });
      child.stderr.setEncoding("utf8").on("data", (c: string) => {
        stderr += c;
      });
      child.once("close", (code) =>
        done({ code: code ?? 1, stdout, stderr, ms: performance.now() - started }),
      );
    });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "agentctl-install-"));
    // Built into the test's own directory, so cli/dist of the checkout is left alone.
    const built = join(dir, "package");
    await run(process.execPath, [join(ROOT, "cli", "build.mjs"), "--out", built, "--quiet"], {
      cwd: ROOT,
    });
    const packed = await run("npm", ["pack", built, "--pack-destination", dir, "--silent"], {
      cwd: dir,
    });
    const tarball = join(dir, packed.stdout.trim().split("\n").at(-1) ?? "");
    const prefix = join(dir, "prefix");
    await run(
      "npm",
      ["install", "-g", "--prefix", prefix, "--offline", "--no-audit", "--no-fund", tarball],
      { cwd: dir },
    );
    bin = join(prefix, "bin", "agentctl");
    tc = await startTestControl();
    // Node itself, and nothing of the repository: no tsx, no node_modules on any path.
    env = {
      PATH: `${join(prefix, "bin")}:${dirname(process.execPath)}`,
      NO_COLOR: "1",
      AGENTCTL_SERVER: tc.adminUrl,
      AGENTCTL_TOKEN: tc.viewerToken,
    };
  }, 120_000);

  afterAll(async () => {
    await tc?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("is one self-contained package: the bundle and its chunks, no node_modules", () => {
    const installed = join(dir, "prefix", "lib", "node_modules", "agentctl");
    expect(existsSync(join(installed, "agentctl.mjs"))).toBe(true);
    expect(existsSync(join(installed, "node_modules"))).toBe(false);
    const manifest = JSON.parse(readFileSync(join(installed, "package.json"), "utf8")) as {
      version: string;
      dependencies?: unknown;
    };
    expect(manifest.version).toBe(VERSION);
    expect(manifest.dependencies).toBeUndefined();
  });

  it("answers --help, help COMMAND and a mistyped command", async () => {
    const help = await agentctl(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("Commands:");
    const topic = await agentctl(["help", "campaign", "show"]);
    expect(topic.stdout).toContain("--state STATE");
    const typo = await agentctl(["campaing", "list"]);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('did you mean "campaign"?');
  });

  it("prints its version and the server's", async () => {
    const result = await agentctl(["version", "-o", "yaml"]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const doc = parse(result.stdout) as {
      client: { version: string };
      server: { version: string; url: string; instanceId: string };
    };
    expect(doc.client.version).toBe(VERSION);
    expect(doc.server).toMatchObject({ version: VERSION, url: tc.adminUrl });
    expect(doc.server.instanceId).not.toBe("");
  });

  it("runs as plain agentctl from a symlink on the PATH to the built bundle, as install.md puts it on the Control host", async () => {
    const links = join(dir, "usr-local-bin");
    await mkdir(links);
    await symlink(join(dir, "package", "agentctl.mjs"), join(links, "agentctl"));
    const linked = await new Promise<Result>((done) => {
      const started = performance.now();
      execFile(
        "agentctl",
        ["version", "-o", "yaml"],
        { cwd: dir, env: { ...env, PATH: `${links}:${dirname(process.execPath)}` } },
        (error, stdout, stderr) =>
          done({
            code: error ? Number(error.code ?? 1) : 0,
            stdout,
            stderr,
            ms: performance.now() - started,
          }),
      );
    });
    expect(linked.stderr).toBe("");
    expect(linked.code).toBe(0);
    expect(parse(linked.stdout)).toMatchObject({ client: { version: VERSION } });
  });

  it("prints an error's details and refuses an unconfirmed start without a terminal", async () => {
    const missing = await agentctl(["campaign", "show", "nope"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe('agentctl: no campaign with id "nope" [CAMPAIGN_NOT_FOUND]\n');
    const start = await agentctl(["campaign", "start", "--version", "9.9.9"], {
      AGENTCTL_TOKEN: tc.operatorToken,
    });
    expect(start.code).toBe(2);
    expect(start.stderr).toBe(
      "agentctl: not started: no terminal to confirm on; pass --yes to start without confirmation\n",
    );
  });

  describe("against a server that accepts and never answers", () => {
    let hung: Server;
    let url = "";
    const sockets = new Set<Socket>();
    beforeAll(async () => {
      hung = createServer((socket) => {
        sockets.add(socket);
        socket.on("close", () => sockets.delete(socket));
      });
      await new Promise<void>((resolveListen) => hung.listen(0, "127.0.0.1", resolveListen));
      url = `http://127.0.0.1:${(hung.address() as { port: number }).port}`;
    });
    afterAll(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolveClose) => hung.close(resolveClose));
    });

    it("gives up after --timeout with one line and exit 1", async () => {
      const result = await agentctl(["node", "list", "--timeout", "2s"], { AGENTCTL_SERVER: url });
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        `agentctl: Control at ${url} did not answer in time: no answer within 2s (raise --timeout to wait longer)\n`,
      );
      expect(result.ms).toBeGreaterThanOrEqual(2000);
      expect(result.ms).toBeLessThan(30_000);
    });
  });
});
