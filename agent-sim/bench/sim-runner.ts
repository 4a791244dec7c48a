/**
 * A simulated fleet in its own process, driven by the benchmark over IPC, so the
 * simulator's CPU and memory never mix with the measured server's.
 *
 * Started by {@link ../bench/processes.ts} with the fleet options as JSON in argv[2].
 * Requests (`{ id, kind }`) are answered with `{ id, ok, value | error }`:
 * `counts` (welcomed, connected, connects, welcomes, heartbeats), `drop` (a reconnect
 * storm), `trace-start` / `trace-stop` (welcomes and connects sampled every `everyMs`),
 * `marks` (with `--instrument` in argv[3]: when each agent first received an upgrade and
 * sent each ObservedState, cleared on read), `stop` (clean stop, then exit). With `--hold`
 * in argv the fleet starts only on a `start` request (so a burst is timed from its first
 * connection, not from this process's start-up); before that, counts are all zero.
 */

import { pino } from "pino";
import type { AgentMessage, Operation } from "../../proto/gen/agentcontrol/v1/agent_control_pb.js";
import { type Fleet, type FleetOptions, SimulatedAgent, startFleet } from "../index.js";

/** Fleet-wide counters the benchmark reads. */
export interface SimCounts {
  readonly welcomed: number;
  readonly connected: number;
  readonly connects: number;
  readonly welcomes: number;
  readonly heartbeats: number;
  /** Welcomed agents per version they run. */
  readonly versions: Readonly<Record<string, number>>;
  readonly at: number;
}

/** Instrumentation marks: `[nodeId, ms]` of first upgrade offers and of reports sent. */
export interface SimMarks {
  readonly offers: readonly (readonly [string, number])[];
  /** `[nodeId, phase, ms]`, phase as the ObservedState enum number. */
  readonly reports: readonly (readonly [string, number, number])[];
}

/** A request to the runner. */
export type SimRequest =
  | {
      readonly id: number;
      readonly kind: "counts" | "drop" | "trace-stop" | "marks" | "stop" | "start";
    }
  | { readonly id: number; readonly kind: "trace-start"; readonly everyMs: number };

/** The runner's answer to the request with the same id. */
export interface SimReply {
  readonly id: number;
  readonly ok: boolean;
  readonly value?: unknown;
  readonly error?: string;
}

/** The largest number of samples one trace keeps (bounds memory). */
const MAX_SAMPLES = 20_000;

/** The counts of a fleet not started yet. */
const NO_COUNTS = (): SimCounts => ({
  welcomed: 0,
  connected: 0,
  connects: 0,
  welcomes: 0,
  heartbeats: 0,
  versions: {},
  at: Date.now(),
});

function countsOf(fleet: Fleet): SimCounts {
  let welcomed = 0;
  let connected = 0;
  let connects = 0;
  let welcomes = 0;
  let heartbeats = 0;
  const versions: Record<string, number> = {};
  for (const agent of fleet.agents) {
    if (agent.welcomed) {
      welcomed++;
      versions[agent.version] = (versions[agent.version] ?? 0) + 1;
    }
    if (agent.connected) connected++;
    connects += agent.connects;
    welcomes += agent.welcomes;
    heartbeats += agent.heartbeats;
  }
  return { welcomed, connected, connects, welcomes, heartbeats, versions, at: Date.now() };
}

/** The most marks kept between two reads (bounds memory). */
const MAX_MARKS = 200_000;

/**
 * Wraps the agents' stream hooks (on the prototype, before any agent starts) to note when
 * each agent first received an upgrade offer and when it sent each ObservedState; the
 * agents' behaviour is unchanged.
 */
function instrument(): { take(): SimMarks } {
  let offers: [string, number][] = [];
  let reports: [string, number, number][] = [];
  const offered = new Set<string>();
  const proto = SimulatedAgent.prototype;
  const onOperation = proto.onOperation;
  proto.onOperation = function (this: SimulatedAgent, operation: Operation) {
    const key = `${this.nodeId} ${operation.id}`;
    if (operation.kind.case === "agentUpgrade" && !offered.has(key)) {
      offered.add(key);
      if (offers.length < MAX_MARKS) offers.push([this.nodeId, Date.now()]);
    }
    onOperation.call(this, operation);
  };
  const opened = proto.opened;
  proto.opened = function (this: SimulatedAgent, write: (message: AgentMessage) => void) {
    const nodeId = this.nodeId;
    opened.call(this, (message) => {
      if (message.body.case === "observed" && reports.length < MAX_MARKS) {
        reports.push([nodeId, message.body.value.phase, Date.now()]);
      }
      write(message);
    });
  };
  return {
    take() {
      const marks = { offers, reports };
      offers = [];
      reports = [];
      return marks;
    },
  };
}

async function main(): Promise<void> {
  const options = JSON.parse(process.argv[2] ?? "{}") as FleetOptions;
  const flags = process.argv.slice(3);
  const marks = flags.includes("--instrument") ? instrument() : undefined;
  // AGENT_SIM_LOG_LEVEL (e.g. debug) logs the agents' own lines to this runner's stderr.
  const level = process.env.AGENT_SIM_LOG_LEVEL;
  const begin = () =>
    startFleet(level ? { ...options, logger: pino({ level }, pino.destination(2)) } : options);
  let fleet: Fleet | undefined = flags.includes("--hold") ? undefined : await begin();
  const counts = (f: Fleet | undefined): SimCounts => (f ? countsOf(f) : NO_COUNTS());
  let trace: { timer: NodeJS.Timeout; samples: SimCounts[] } | undefined;
  const answer = async (request: SimRequest): Promise<unknown> => {
    switch (request.kind) {
      case "counts":
        return counts(fleet);
      case "start":
        fleet ??= await begin();
        return counts(fleet);
      case "drop":
        fleet?.dropAllStreams();
        return counts(fleet);
      case "trace-start": {
        if (trace) clearInterval(trace.timer);
        const samples: SimCounts[] = [counts(fleet)];
        const timer = setInterval(() => {
          if (samples.length < MAX_SAMPLES) samples.push(counts(fleet));
        }, request.everyMs);
        trace = { timer, samples };
        return samples[0];
      }
      case "trace-stop": {
        if (!trace) return [];
        clearInterval(trace.timer);
        const samples = trace.samples;
        trace = undefined;
        return samples;
      }
      case "marks":
        return marks?.take() ?? { offers: [], reports: [] };
      case "stop":
        if (trace) clearInterval(trace.timer);
        await fleet?.stop();
        setImmediate(() => process.exit(0));
        return null;
    }
  };
  process.on("message", (request: SimRequest) => {
    answer(request).then(
      (value) => process.send?.({ id: request.id, ok: true, value } satisfies SimReply),
      (error: unknown) =>
        process.send?.({ id: request.id, ok: false, error: String(error) } satisfies SimReply),
    );
  });
  // The parent going away must not leave thousands of streams open.
  process.on("disconnect", () => {
    (fleet?.stop() ?? Promise.resolve()).then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
  process.send?.({ id: 0, ok: true, value: "started" } satisfies SimReply);
}

main().catch((error: unknown) => {
  process.stderr.write(`sim-runner: ${String(error)}\n`);
  process.exit(1);
});
