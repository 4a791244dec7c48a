/**
 * What a fleet scenario measures: a server agents connect to, either the real Control or
 * the bare grpc-js baseline, with the same handles on both (pid, memory after GC, kill,
 * restart on the same address).
 */
import type { BenchControl } from "./control.js";
import {
  type EventLoopDelay,
  eventLoopDelay,
  type MemorySnapshot,
  memorySnapshot,
} from "./proc-stats.js";
import { type EchoProcess, startEchoProcess } from "./processes.js";

/** A measured server. */
export interface Target {
  /** `control` or `bare`. */
  readonly name: "control" | "bare";
  /** `HOST:PORT` agents connect to. */
  readonly server: string;
  readonly joinToken: string;
  /** The pid of the measured Node.js process (changes on restart). */
  pid(): number;
  /** Memory after two full GCs (the event-loop delay since the last reading with it). */
  memory(): Promise<MemorySnapshot>;
  /**
   * The event-loop delay since the last reading, which starts a new window; no GC runs, so
   * what is measured across the reading goes on undisturbed.
   */
  eventLoopDelay(): Promise<EventLoopDelay | undefined>;
  /** SIGKILL. */
  kill(): Promise<void>;
  /** Starts again on the same address; resolves once it serves. */
  restart(): Promise<void>;
}

/** The real Control as a target. */
export async function controlTarget(control: BenchControl): Promise<Target> {
  const joinToken = await control.joinToken();
  return {
    name: "control",
    server: control.agentAddr,
    joinToken,
    pid: () => control.pid(),
    memory: () => memorySnapshot(control.dir, "control", control.pid()),
    eventLoopDelay: () => eventLoopDelay(control.dir, "control", control.pid()),
    kill: () => control.kill(),
    restart: () => control.restart(),
  };
}

/** The bare grpc-js server as a target, with its fan-out of the offer it was started with. */
export interface BareServer extends Target {
  stop(): Promise<void>;
  fanOut: EchoProcess["fanOut"];
}

/**
 * The bare grpc-js server as a target (stop it with `stop`); with `offerFile`
 * (`bare-fanout.ts`), `fanOut` writes that offer to many of its streams at once.
 */
export async function bareTarget(
  dir: string,
  heartbeatMs: number,
  offerFile?: string,
): Promise<BareServer> {
  let echo: EchoProcess = await startEchoProcess(dir, heartbeatMs, 0, offerFile);
  const port = echo.port;
  return {
    name: "bare",
    server: `127.0.0.1:${port}`,
    joinToken: "ajt.bare.baseline",
    pid: () => echo.pid,
    memory: () => memorySnapshot(dir, "echo", echo.pid),
    eventLoopDelay: () => eventLoopDelay(dir, "echo", echo.pid),
    kill: () => echo.kill(),
    async restart() {
      echo = await startEchoProcess(dir, heartbeatMs, port, offerFile);
    },
    stop: () => echo.stop(),
    fanOut: (count) => echo.fanOut(count),
  };
}
