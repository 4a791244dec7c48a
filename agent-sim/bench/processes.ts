/**
 * The processes a benchmark run starts, each on its own so no measurement mixes with
 * another's CPU or memory: simulated fleets (driven over IPC) and the bare grpc-js
 * server. Everything listens on loopback only.
 */
import { type ChildProcess, fork, spawn } from "node:child_process";
import { createWriteStream } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { FleetOptions } from "../fleet-options.js";
import type { SimCounts, SimMarks, SimReply, SimRequest } from "./sim-runner.js";

/** The repository root. */
export const ROOT = resolve(import.meta.dirname, "..", "..");
const TSX_LOADER = pathToFileURL(join(ROOT, "node_modules", "tsx", "dist", "loader.mjs")).href;
/** The GC hook (see gc-hook.mjs) as a `--import` specifier. */
export const GC_HOOK = pathToFileURL(join(ROOT, "agent-sim", "bench", "gc-hook.mjs")).href;

/**
 * The environment variable holding the niceness the simulator processes run at (`--sims-nice`;
 * unset or 0: the same priority as the measured server). On two shared cores the simulated
 * fleet competes with the server for the CPU; a niceness of 10 lets the server run first
 * whenever it has work, as on a host of its own, while the fleet still gets every idle cycle.
 */
export const SIM_NICE_ENV = "AGENT_CONTROL_BENCH_SIM_NICE";

/** The simulators' niceness from {@link SIM_NICE_ENV} (0 when unset). */
export function simulatorNiceness(): number {
  const text = process.env[SIM_NICE_ENV] ?? "";
  if (text === "") return 0;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0 || n > 19) {
    throw new Error(`${SIM_NICE_ENV} must be a whole number from 0 to 19, not "${text}"`);
  }
  return n;
}

/** Environment that turns the GC hook on in a process started with it. */
export function gcHookEnv(dir: string, name: string): Record<string, string> {
  const inherited = process.env.NODE_OPTIONS ?? "";
  return {
    AGENT_CONTROL_BENCH_GC: "1",
    AGENT_CONTROL_BENCH_DIR: dir,
    AGENT_CONTROL_BENCH_NAME: name,
    NODE_OPTIONS: `${inherited} --import ${GC_HOOK}`.trim(),
  };
}

/** A simulated fleet in a child process. */
export interface SimProcess {
  readonly child: ChildProcess;
  counts(): Promise<SimCounts>;
  /** Drops every stream at once (reconnect storm). */
  drop(): Promise<SimCounts>;
  traceStart(everyMs: number): Promise<void>;
  traceStop(): Promise<SimCounts[]>;
  /** Offer and report marks since the last call (only when started with `instrument`). */
  marks(): Promise<SimMarks>;
  /** Resolves once `predicate` holds (polled every 250 ms); rejects after `timeoutMs`. */
  waitFor(
    predicate: (c: SimCounts) => boolean,
    timeoutMs: number,
    what: string,
  ): Promise<SimCounts>;
  /** Starts a fleet started with `hold` (no-op otherwise). */
  start(): Promise<void>;
  /** Stops the fleet cleanly (SIGKILL after 20 s). */
  stop(): Promise<void>;
}

/**
 * Starts `simulators` simulator processes, one after another, holding `agents` between them
 * (the first ones one more when it does not divide): process `i` gets `optionsOf(i, count)`
 * and logs to `logOf(i)`. Each is pushed onto `into` as soon as it runs, so the caller stops
 * every started one even when a later start fails.
 */
export async function startSimProcesses(
  into: SimProcess[],
  agents: number,
  simulators: number,
  optionsOf: (index: number, count: number) => FleetOptions,
  logOf: (index: number) => string,
  instrument = false,
): Promise<void> {
  for (let i = 0; i < simulators; i++) {
    const count = Math.floor(agents / simulators) + (i < agents % simulators ? 1 : 0);
    into.push(await startSimProcess(optionsOf(i, count), logOf(i), instrument));
  }
}

/**
 * Starts a fleet in its own process and resolves once it has started connecting; with
 * `hold`, once the process is ready, and the fleet connects on {@link SimProcess.start}.
 */
export async function startSimProcess(
  options: FleetOptions,
  logFile: string,
  instrument = false,
  hold = false,
): Promise<SimProcess> {
  const args = [
    JSON.stringify(options),
    ...(instrument ? ["--instrument"] : []),
    ...(hold ? ["--hold"] : []),
  ];
  // Through nice(1), so every thread of the process (V8's and libuv's too) runs at it.
  const niceness = simulatorNiceness();
  const child = fork(join(ROOT, "agent-sim", "bench", "sim-runner.ts"), args, {
    cwd: ROOT,
    ...(niceness > 0 ? { execPath: "nice" } : {}),
    execArgv: [
      ...(niceness > 0 ? ["-n", String(niceness), process.execPath] : []),
      "--import",
      TSX_LOADER,
    ],
    stdio: ["ignore", "ignore", "pipe", "ipc"],
  });
  child.stderr?.pipe(createWriteStream(logFile, { flags: "a" }));
  const pending = new Map<number, (reply: SimReply) => void>();
  let nextId = 1;
  const started = new Promise<void>((resolveStart, reject) => {
    child.once("exit", (code) => reject(new Error(`sim-runner exited (${code}); see ${logFile}`)));
    child.on("message", (reply: SimReply) => {
      if (reply.id === 0) resolveStart();
      pending.get(reply.id)?.(reply);
      pending.delete(reply.id);
    });
  });
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  const call = <T>(kind: SimRequest["kind"], extra: Record<string, unknown> = {}): Promise<T> =>
    new Promise((resolveCall, reject) => {
      const id = nextId++;
      const timer = setTimeout(() => reject(new Error(`sim ${kind} timed out`)), 60_000);
      pending.set(id, (reply) => {
        clearTimeout(timer);
        if (reply.ok) resolveCall(reply.value as T);
        else reject(new Error(reply.error));
      });
      child.send({ id, kind, ...extra });
    });
  await started;
  const sim: SimProcess = {
    child,
    counts: () => call<SimCounts>("counts"),
    drop: () => call<SimCounts>("drop"),
    traceStart: (everyMs) => call<void>("trace-start", { everyMs }),
    traceStop: () => call<SimCounts[]>("trace-stop"),
    marks: () => call<SimMarks>("marks"),
    start: () => call<void>("start"),
    async waitFor(predicate, timeoutMs, what) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const counts = await sim.counts();
        if (predicate(counts)) return counts;
        if (Date.now() > deadline) {
          throw new Error(
            `timed out after ${timeoutMs} ms waiting for ${what} (${counts.welcomed} welcomed)`,
          );
        }
        await sleep(250);
      }
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
      await call("stop").catch(() => child.kill("SIGKILL"));
      await exited;
      clearTimeout(timer);
    },
  };
  return sim;
}

/** The bare grpc-js server, running. */
export interface EchoProcess {
  readonly pid: number;
  readonly port: number;
  stop(): Promise<void>;
  /** SIGKILL at once. */
  kill(): Promise<void>;
  /**
   * Writes the offer it was started with (`offerFile`) to `count` of its streams at once
   * (`echo-server.ts`); resolves with when it began (epoch ms), how many it wrote and how long
   * its loop took (ms).
   * @throws when it was started without an offer, or does not answer within 60 s.
   */
  fanOut(count: number): Promise<{ at: number; sent: number; writeMs: number }>;
}

/**
 * Starts the bare server (with the GC hook and its event-loop delay sampler, under `dir`) and
 * waits for its port; with `offerFile`, it can fan that offer out ({@link EchoProcess.fanOut}).
 */
export async function startEchoProcess(
  dir: string,
  heartbeatMs: number,
  port = 0,
  offerFile?: string,
): Promise<EchoProcess> {
  const child = spawn(
    process.execPath,
    [
      "--import",
      TSX_LOADER,
      join(ROOT, "agent-sim", "bench", "echo-server.ts"),
      "--addr",
      `127.0.0.1:${port}`,
      "--heartbeat-ms",
      String(heartbeatMs),
      ...(offerFile === undefined ? [] : ["--offer", offerFile]),
    ],
    {
      cwd: ROOT,
      // The same instrumentation as Control's (the event-loop delay sampler, a 10 ms timer),
      // so neither server's CPU figure carries a cost the other does not.
      env: { ...process.env, ...gcHookEnv(dir, "echo"), AGENT_CONTROL_BENCH_ELD: "1" },
      stdio: ["pipe", "pipe", "pipe"],
    },
  );
  child.stderr?.pipe(createWriteStream(join(dir, "echo.log"), { flags: "a" }));
  // A write after the server died fails on its stdin: the fan-out's own timeout says so.
  child.stdin?.on("error", () => undefined);
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  const bound = await new Promise<number>((resolvePort, reject) => {
    const timer = setTimeout(() => reject(new Error("echo server did not start in 60 s")), 60_000);
    let out = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening (\d+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolvePort(Number(match[1]));
      }
    });
    child.once("exit", (code) => reject(new Error(`echo server exited (${code})`)));
  });
  const end = async (signal: NodeJS.Signals) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill(signal);
    await exited;
  };
  const fanOut = (count: number) =>
    new Promise<{ at: number; sent: number; writeMs: number }>((resolveFanOut, reject) => {
      if (offerFile === undefined) {
        reject(new Error("the bare server was started without an offer"));
        return;
      }
      let out = "";
      const onData = (chunk: Buffer) => {
        out += chunk.toString();
        const match = /fanout (\d+) (\d+) ([\d.]+)\n/.exec(out);
        if (!match) return;
        clearTimeout(timer);
        child.stdout?.off("data", onData);
        resolveFanOut({ at: Number(match[1]), sent: Number(match[2]), writeMs: Number(match[3]) });
      };
      const timer = setTimeout(() => {
        child.stdout?.off("data", onData);
        reject(new Error("the bare server did not fan out in 60 s"));
      }, 60_000);
      child.stdout?.on("data", onData);
      child.stdin?.write(`fanout ${count}\n`);
    });
  return {
    pid: child.pid ?? 0,
    port: bound,
    stop: () => end("SIGTERM"),
    kill: () => end("SIGKILL"),
    fanOut,
  };
}

/** Resolves once all `sims` together have `total` welcomed streams. */
export async function waitWelcomed(
  sims: readonly SimProcess[],
  total: number,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const counts = await Promise.all(sims.map((sim) => sim.counts()));
    const welcomed = counts.reduce((n, c) => n + c.welcomed, 0);
    if (welcomed >= total) return;
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what} (${welcomed} welcomed)`);
    await sleep(250);
  }
}

/** Resolves after `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
