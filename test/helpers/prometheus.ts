/**
 * A real Prometheus (Debian's `prometheus`, which `.ci/pretest.mjs` installs) scraping one
 * target every second, on a port and a data dir of its own, with rule files loaded; and its
 * HTTP API for the tests: instant queries and the alerts.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { freePort } from "./process-fixtures.js";
import { eventually } from "./raw-agent.js";

export const PROMETHEUS = "/usr/bin/prometheus";
export const PROMTOOL = "/usr/bin/promtool";

/** One series of an instant query's vector. */
export interface Sample {
  readonly metric: Record<string, string>;
  readonly value: number;
}

/** A running Prometheus. */
export interface Prometheus {
  readonly url: string;
  /** The data of an API call (`/api/v1/...`); throws unless its status is success. */
  api(path: string): Promise<unknown>;
  /** An instant query's vector. */
  query(expr: string): Promise<Sample[]>;
  /** The value of `expr` (one series) once it satisfies `check`; throws after 15 s. */
  settled(expr: string, check: (value: number) => boolean): Promise<number>;
  stop(): Promise<void>;
}

/** Starts Prometheus scraping `target` (`host:port`) in job `agent-control`, with `rules`. */
export async function startPrometheus(
  target: string,
  dir: string,
  rules: readonly string[] = [],
): Promise<Prometheus> {
  const port = await freePort();
  const config = join(dir, "prometheus.yml");
  await writeFile(
    config,
    [
      "global: { scrape_interval: 1s, evaluation_interval: 1s }",
      `rule_files: ${JSON.stringify(rules)}`,
      "scrape_configs:",
      "  - job_name: agent-control",
      `    static_configs: [{ targets: [${JSON.stringify(target)}] }]`,
      "",
    ].join("\n"),
  );
  let output = "";
  const child: ChildProcess = spawn(
    PROMETHEUS,
    [
      `--config.file=${config}`,
      `--storage.tsdb.path=${join(dir, "data")}`,
      `--web.listen-address=127.0.0.1:${port}`,
      "--log.level=warn",
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const url = `http://127.0.0.1:${port}`;
  await eventually(
    async () => {
      if (child.exitCode !== null) throw new Error(`prometheus exited: ${output}`);
      return (await fetch(`${url}/-/ready`).catch(() => undefined))?.status === 200;
    },
    20_000,
    "Prometheus ready",
  );
  const api = async (path: string): Promise<unknown> => {
    const response = await fetch(`${url}${path}`);
    const body = (await response.json()) as { status: string; data: unknown; error?: string };
    if (body.status !== "success") throw new Error(`${path}: ${body.error}`);
    return body.data;
  };
  const query = async (expr: string): Promise<Sample[]> => {
    const data = (await api(`/api/v1/query?query=${encodeURIComponent(expr)}`)) as {
      result: { metric: Record<string, string>; value: [number, string] }[];
    };
    return data.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
  };
  const settled = async (expr: string, check: (value: number) => boolean): Promise<number> => {
    let last: Sample[] = [];
    await eventually(
      async () => {
        last = await query(expr);
        return last.length === 1 && check(last[0]?.value ?? Number.NaN);
      },
      15_000,
      `${expr} (last: ${JSON.stringify(last)})`,
    ).catch(() => {
      throw new Error(`${expr} never held; Prometheus answered ${JSON.stringify(last)}`);
    });
    return last[0]?.value ?? Number.NaN;
  };
  return {
    url,
    api,
    query,
    settled,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await exited;
    },
  };
}
