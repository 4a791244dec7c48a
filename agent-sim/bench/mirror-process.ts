/**
 * The plain HTTP mirror of the downloads benchmark, in a process of its own so its CPU is
 * measured apart from Control's and the simulators': Debian's nginx (`/usr/sbin/nginx`,
 * package nginx-light) serving a folder with sendfile when it is installed, else a Node.js
 * `http` static server (`static-mirror.ts`) in a child process. Either serves `root` at
 * `http://127.0.0.1:PORT/`, sends no credential and knows nothing of Control.
 */
import { type ChildProcess, fork, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { cpuSeconds, vmRssBytes } from "./proc-stats.js";
import { ROOT, sleep } from "./processes.js";

const NGINX = "/usr/sbin/nginx";
const TSX_LOADER = pathToFileURL(join(ROOT, "node_modules", "tsx", "dist", "loader.mjs")).href;

/** A running mirror process. */
export interface MirrorProcess {
  /** `nginx 1.22` or `node http`. */
  readonly kind: string;
  readonly url: string;
  /** CPU seconds its processes (nginx: master and workers) used so far. */
  cpuSeconds(): Promise<number>;
  /** Resident memory of its processes now, in bytes. */
  rssBytes(): Promise<number>;
  /** Requests answered 200 so far (nginx's access log), or undefined when not counted. */
  fetches(): Promise<number | undefined>;
  stop(): Promise<void>;
}

async function childPids(pid: number): Promise<number[]> {
  try {
    const text = await readFile(`/proc/${pid}/task/${pid}/children`, "utf8");
    return text.trim() === "" ? [] : text.trim().split(/\s+/).map(Number);
  } catch {
    return [];
  }
}

async function sum(pids: readonly number[], read: (pid: number) => Promise<number>) {
  let total = 0;
  for (const pid of pids) total += await read(pid).catch(() => 0);
  return total;
}

async function waitListening(url: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    try {
      await fetch(url);
      return;
    } catch {
      await sleep(50);
    }
  }
  throw new Error(`the mirror at ${url} did not answer`);
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}

/**
 * Starts the mirror over `root` on `port` (nginx when installed, else Node.js `http`), with its
 * configuration and logs under `dir`.
 */
export async function startMirrorProcess(
  root: string,
  dir: string,
  port: number,
): Promise<MirrorProcess> {
  const url = `http://127.0.0.1:${port}`;
  if (existsSync(NGINX)) {
    const conf = join(dir, "nginx.conf");
    await writeFile(
      conf,
      [
        "daemon off;",
        "worker_processes 1;",
        `pid ${join(dir, "nginx.pid")};`,
        `error_log ${join(dir, "nginx-error.log")} warn;`,
        "events { worker_connections 4096; }",
        "http {",
        `  log_format status "$status";`,
        `  access_log ${join(dir, "access.log")} status buffer=64k flush=1s;`,
        "  sendfile on;",
        "  tcp_nopush on;",
        `  client_body_temp_path ${dir};`,
        `  proxy_temp_path ${dir};`,
        `  fastcgi_temp_path ${dir};`,
        `  uwsgi_temp_path ${dir};`,
        `  scgi_temp_path ${dir};`,
        `  server { listen 127.0.0.1:${port}; root ${root}; }`,
        "}",
        "",
      ].join("\n"),
    );
    const child = spawn(NGINX, ["-c", conf, "-p", dir], { stdio: "ignore" });
    await waitListening(url);
    const pids = async () => [child.pid as number, ...(await childPids(child.pid as number))];
    return {
      kind: "nginx (Debian nginx-light, 1 worker, sendfile)",
      url,
      cpuSeconds: async () => sum(await pids(), cpuSeconds),
      rssBytes: async () => sum(await pids(), vmRssBytes),
      async fetches() {
        await sleep(1500); // the log's buffer is flushed every second
        const log = await readFile(join(dir, "access.log"), "utf8").catch(() => "");
        return log.split("\n").filter((l) => l === "200").length;
      },
      stop: () => stopChild(child),
    };
  }
  const child = fork(join(ROOT, "agent-sim", "bench", "mirror-main.ts"), [root, String(port)], {
    cwd: ROOT,
    execArgv: ["--import", TSX_LOADER],
    stdio: "ignore",
  });
  await waitListening(url);
  return {
    kind: "Node.js http static server",
    url,
    cpuSeconds: () => cpuSeconds(child.pid as number),
    rssBytes: () => vmRssBytes(child.pid as number),
    fetches: async () => undefined,
    stop: () => stopChild(child),
  };
}
