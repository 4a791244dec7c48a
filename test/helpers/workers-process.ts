/**
 * `control/main.ts --workers N` as a real process tree for the tests of the cluster's
 * signals: the primary (started as the leader of its own process group, as systemd's control
 * group holds it, so a test can signal the whole group at once), its workers and its embedded
 * PostgreSQL, with every JSON log line kept.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { freePorts } from "./process-fixtures.js";

/** One of Control's JSON log lines. */
export interface LogLine {
  readonly pid: number;
  readonly level: number;
  readonly msg: string;
  readonly [key: string]: unknown;
}

/** A running `--workers` primary. */
export interface WorkersProcess {
  readonly child: ChildProcess;
  readonly adminUrl: string;
  /** `127.0.0.1:<port>` of the shared agent port. */
  readonly agentAddress: string;
  /** Every JSON log line so far (stdout). */
  lines(): LogLine[];
  /** stderr so far. */
  stderr(): string;
  /** The pids of the workers the primary said it started, in order. */
  started(): number[];
  /** The pid of the embedded PostgreSQL server (from its `postmaster.pid`), if it runs. */
  postgresPid(): number | undefined;
  /** Resolves with the primary's exit code and signal. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Waits until `done` holds, polling; throws with the output on timeout or early exit. */
  until(what: string, ms: number, done: () => boolean | Promise<boolean>): Promise<void>;
}

/** Options of {@link startWorkers}. */
export interface StartWorkersOptions {
  /** The data directory (holds the embedded PostgreSQL) and where the config file goes. */
  readonly dir: string;
  readonly workers: number;
  /** The config file's content. */
  readonly config: Record<string, unknown>;
  readonly env?: Readonly<Record<string, string>>;
  /** Extra `node` flags before the entry (e.g. `--import` of a planted fault). */
  readonly nodeFlags?: readonly string[];
  /** The entry and its launcher (default `--import tsx control/main.ts`). */
  readonly entry?: readonly string[];
}

/** True when a process with that pid exists. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Starts the primary and waits until every worker serves. */
export async function startWorkers(o: StartWorkersOptions): Promise<WorkersProcess> {
  const { writeFile } = await import("node:fs/promises");
  const configFile = join(o.dir, "control.json");
  await writeFile(configFile, JSON.stringify(o.config));
  const [agentPort, adminPort, downloadsPort] = (await freePorts(3)) as [number, number, number];
  const adminUrl = `http://127.0.0.1:${adminPort}`;
  const { DATABASE_URL: _external, ...env } = process.env;
  const child = spawn(
    process.execPath,
    [
      ...(o.nodeFlags ?? []),
      ...(o.entry ?? ["--import", "tsx", "control/main.ts"]),
      "--config",
      configFile,
      "--workers",
      `${o.workers}`,
    ],
    {
      cwd: process.cwd(),
      env: {
        ...env,
        AGENT_CONTROL_AGENT_ADDR: `127.0.0.1:${agentPort}`,
        AGENT_CONTROL_ADMIN_ADDR: `127.0.0.1:${adminPort}`,
        AGENT_CONTROL_DOWNLOADS_ADDR: `127.0.0.1:${downloadsPort}`,
        AGENT_CONTROL_DATA_DIR: o.dir,
        AGENT_CONTROL_LOG_LEVEL: "info",
        ...o.env,
      },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    },
  );
  const lines: LogLine[] = [];
  let partial = "";
  let stderr = "";
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
    const text = partial + chunk;
    const parts = text.split("\n");
    partial = parts.pop() ?? "";
    for (const part of parts) {
      try {
        lines.push(JSON.parse(part) as LogLine);
      } catch {
        lines.push({ pid: 0, level: 0, msg: `not JSON: ${part}` });
      }
    }
  });
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  let primaryExit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  void exited.then((e) => {
    primaryExit = e;
  });
  const dump = () =>
    `\nstdout:\n${lines.map((l) => JSON.stringify(l)).join("\n")}\nstderr:\n${stderr}`;
  const until = async (what: string, ms: number, done: () => boolean | Promise<boolean>) => {
    const deadline = Date.now() + ms;
    while (!(await done())) {
      if (Date.now() > deadline) throw new Error(`timed out: ${what}${dump()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const started = () =>
    lines.flatMap((l) => {
      const m = /^worker (\d+) started$/.exec(l.msg);
      return m ? [Number(m[1])] : [];
    });
  const pidFile = join(o.dir, "postgres", "postmaster.pid");
  const postgresPid = () => {
    if (!existsSync(pidFile)) return undefined;
    const pid = Number.parseInt(readFileSync(pidFile, "utf8").split("\n")[0] ?? "", 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  };
  const serving = () => lines.filter((l) => /is serving agents/.test(l.msg)).length;
  await until(`${o.workers} workers serving`, 150_000, () => {
    if (primaryExit)
      throw new Error(`the primary exited (${JSON.stringify(primaryExit)})${dump()}`);
    return serving() >= o.workers;
  });
  return {
    child,
    adminUrl,
    agentAddress: `127.0.0.1:${agentPort}`,
    lines: () => lines,
    stderr: () => stderr,
    started,
    postgresPid,
    exited,
    until,
  };
}

/**
 * Calls the admin API's `NodeService/ListNodes` (Connect, JSON) with `token` over a new
 * connection, so that calls in a row reach the workers in turn; resolves with the status.
 */
export async function listNodesStatus(adminUrl: string, token: string): Promise<number> {
  const url = new URL("/agentcontrol.admin.v1.NodeService/ListNodes", adminUrl);
  return await new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: "POST",
        agent: false,
        headers: {
          "content-type": "application/json",
          authorization: `Bearer ${token}`,
          connection: "close",
        },
      },
      (res) => {
        res.resume();
        res.once("end", () => resolve(res.statusCode ?? 0));
      },
    );
    req.once("error", reject);
    req.end("{}");
  });
}
