/**
 * A simulated fleet in its own process, driven by the benchmark over IPC, so the
 * simulator's CPU and memory never mix with the measured server's.
 *
 * Started by {@link ../bench/processes.ts} with the fleet options as JSON in argv[2].
 * Requests (`{ id, kind }`) are answered with `{ id, ok, value | error }`:
 * `counts` (welcomed, connected, connects, welcomes, heartbeats), `drop` (a reconnect
 * storm), `trace-start` / `trace-stop` (welcomes and connects sampled every `everyMs`),
 * `stop` (clean stop, then exit).
 */
import { type Fleet, type FleetOptions, startFleet } from "../index.js";

/** Fleet-wide counters the benchmark reads. */
export interface SimCounts {
  readonly welcomed: number;
  readonly connected: number;
  readonly connects: number;
  readonly welcomes: number;
  readonly heartbeats: number;
  readonly at: number;
}

/** A request to the runner. */
export type SimRequest =
  | { readonly id: number; readonly kind: "counts" | "drop" | "trace-stop" | "stop" }
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

function counts(fleet: Fleet): SimCounts {
  let welcomed = 0;
  let connected = 0;
  let connects = 0;
  let welcomes = 0;
  let heartbeats = 0;
  for (const agent of fleet.agents) {
    if (agent.welcomed) welcomed++;
    if (agent.connected) connected++;
    connects += agent.connects;
    welcomes += agent.welcomes;
    heartbeats += agent.heartbeats;
  }
  return { welcomed, connected, connects, welcomes, heartbeats, at: Date.now() };
}

async function main(): Promise<void> {
  const options = JSON.parse(process.argv[2] ?? "{}") as FleetOptions;
  const fleet = await startFleet(options);
  let trace: { timer: NodeJS.Timeout; samples: SimCounts[] } | undefined;
  const answer = async (request: SimRequest): Promise<unknown> => {
    switch (request.kind) {
      case "counts":
        return counts(fleet);
      case "drop":
        fleet.dropAllStreams();
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
      case "stop":
        if (trace) clearInterval(trace.timer);
        await fleet.stop();
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
    fleet.stop().then(
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
