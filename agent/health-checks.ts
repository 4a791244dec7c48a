/**
 * Running a release's signed health checks on the node: each command without a shell, each
 * HTTP GET on 127.0.0.1, one round after another for the release's period. The first failure
 * ends the run with a message naming the check, its exit code or status, and the first lines
 * of what it printed, which the Agent reports as FAILED `health_check_failed`.
 */
import { spawn } from "node:child_process";
import type {
  CommandHealthCheck,
  HealthCheck,
  HttpHealthCheck,
  ReleaseHealth,
} from "../control/shared/release/index.js";
import { sleep } from "./core/waker.js";

/** The outcome of a run: passed, or the first failure's message. */
export type HealthVerdict =
  | { readonly ok: true }
  | { readonly ok: false; readonly message: string };

/** How many lines, and characters in all, of a failing check's output a report keeps. */
export const OUTPUT_LINES = 5;
const OUTPUT_CHARS = 400;
const CAPTURE_BYTES = 16 * 1024;

/**
 * Runs every check of `health` in order, round after round, until `periodSeconds` have passed
 * since the first round began (always one round). Resolves with the first failure; never
 * rejects. An abort ends the run as a failure ("stopped").
 */
export async function runHealthChecks(
  health: ReleaseHealth,
  signal: AbortSignal,
): Promise<HealthVerdict> {
  const started = Date.now();
  for (let round = 1; ; round++) {
    for (const check of health.checks) {
      if (signal.aborted) return { ok: false, message: "the health checks were stopped" };
      const failure = await runCheck(check, signal);
      if (failure !== undefined) {
        const when = round === 1 ? "" : ` (round ${round}, ${secondsSince(started)} s in)`;
        return { ok: false, message: `${failure}${when}` };
      }
    }
    const elapsed = Date.now() - started;
    if (elapsed >= health.periodSeconds * 1000) return { ok: true };
    await sleep(
      Math.min(health.intervalSeconds * 1000, health.periodSeconds * 1000 - elapsed),
      signal,
    );
  }
}

/** Runs one check: undefined when it passed, otherwise why it failed. */
export function runCheck(check: HealthCheck, signal: AbortSignal): Promise<string | undefined> {
  switch (check.kind) {
    case "command":
      return runCommand(check, signal);
    case "http":
      return runHttp(check, signal);
  }
}

function runCommand(check: CommandHealthCheck, signal: AbortSignal): Promise<string | undefined> {
  const what = `health check "${check.name}" (${[check.command, ...check.args].join(" ")})`;
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let captured = 0;
    const keep = (chunk: Buffer) => {
      if (captured >= CAPTURE_BYTES) return;
      chunks.push(chunk);
      captured += chunk.length;
    };
    let timedOut = false;
    let settled = false;
    // Its own process group, so a timeout or a stop kills what it started too.
    const child = spawn(check.command, check.args, {
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    const killGroup = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      } catch {
        // already gone
      }
    };
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, check.timeoutSeconds * 1000);
    signal.addEventListener("abort", killGroup, { once: true });
    const output = () => firstLines(Buffer.concat(chunks).toString("utf8"));
    const finish = (result: string | undefined) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener("abort", killGroup);
      child.stdout.destroy();
      child.stderr.destroy();
      resolve(result);
    };
    child.on("error", (error) => finish(`${what} could not be run: ${error.message}`));
    child.on("exit", (code, killedBy) => {
      const verdict = () => {
        if (timedOut) return `${what} did not finish within ${check.timeoutSeconds} s${output()}`;
        if (code === check.exitCode) return undefined;
        const how = code === null ? `was killed by ${killedBy}` : `exited with code ${code}`;
        return `${what} ${how}, expected ${check.exitCode}${output()}`;
      };
      // Its output is read to the end, unless something it left running holds the pipes.
      let closed = false;
      child.once("close", () => {
        closed = true;
        finish(verdict());
      });
      setTimeout(() => {
        if (!closed) finish(verdict());
      }, 200);
    });
  });
}

async function runHttp(check: HttpHealthCheck, signal: AbortSignal): Promise<string | undefined> {
  const url = `http://127.0.0.1:${check.port}${check.path}`;
  const what = `health check "${check.name}" (GET ${url})`;
  const timeout = AbortSignal.timeout(check.timeoutSeconds * 1000);
  try {
    const response = await fetch(url, {
      signal: AbortSignal.any([signal, timeout]),
      redirect: "manual",
    });
    const body = await readSome(response);
    if (response.status >= 200 && response.status < 300) return undefined;
    return `${what} answered status ${response.status}${firstLines(body)}`;
  } catch (error) {
    if (timeout.aborted) return `${what} did not answer within ${check.timeoutSeconds} s`;
    const cause = (error as { cause?: { message?: string } }).cause?.message;
    return `${what} failed: ${cause ?? (error as Error).message}`;
  }
}

async function readSome(response: Response): Promise<string> {
  const reader = response.body?.getReader();
  if (reader === undefined) return "";
  const parts: Uint8Array[] = [];
  let size = 0;
  while (size < CAPTURE_BYTES) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
    size += value.byteLength;
  }
  await reader.cancel().catch(() => {});
  return Buffer.concat(parts).toString("utf8");
}

/** ": " and the first {@link OUTPUT_LINES} non-empty lines of `text`, joined by " | "; "" when empty. */
export function firstLines(text: string): string {
  const lines = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== "")
    .slice(0, OUTPUT_LINES);
  if (lines.length === 0) return "";
  const joined = lines.join(" | ");
  return `: ${joined.length > OUTPUT_CHARS ? `${joined.slice(0, OUTPUT_CHARS - 3)}...` : joined}`;
}

function secondsSince(start: number): number {
  return Math.round((Date.now() - start) / 1000);
}
