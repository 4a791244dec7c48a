/**
 * The full and quick runs' scenarios on the bare grpc-js server, after Control's: the same
 * fleet load (memory, CPU, storms with Control's downtime), the handshake burst, and, when the
 * run has a release, the fan-out's baseline (`bare-fanout.ts`), for which the bare fleet runs as
 * Control's did (the release's pin, instant restarts, the offer marks).
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type BareFanout, measureBareFanout, offerFile, offerMessage } from "./bare-fanout.js";
import type { BenchRelease } from "./campaign-release.js";
import { type FleetLoadPlan, type FleetLoadResult, runFleetLoad } from "./fleet-load.js";
import { type HandshakeBurst, type HandshakePlan, handshakeBurst } from "./handshakes.js";
import { bareTarget } from "./target.js";

/** Inputs of {@link runBareScenarios}. */
export interface BareScenarios {
  readonly dir: string;
  readonly heartbeatMs: number;
  /** Control's fleet plan with the bare server's number of storms. */
  readonly plan: FleetLoadPlan;
  /** The downtime Control's first storm took, imposed on the bare server's storms. */
  readonly stormDowntimeMs: number | undefined;
  /** The run's release (full mode): the bare server then also makes the fan-out's baseline. */
  readonly release: BenchRelease | undefined;
  /** Control's handshake burst, made again against the bare server. */
  readonly burst: Omit<HandshakePlan, "label">;
  readonly say: (text: string) => void;
}

/** What the bare server showed. */
export interface BareResults {
  readonly load: FleetLoadResult;
  readonly burst: HandshakeBurst;
  /** Undefined without a release, or when the fan-out failed (said through `say`). */
  readonly fanout: BareFanout | undefined;
}

/** Runs the bare server's scenarios and stops it. */
export async function runBareScenarios(o: BareScenarios): Promise<BareResults> {
  const { release, say } = o;
  let offer: string | undefined;
  if (release !== undefined) {
    offer = offerFile(o.dir);
    await writeFile(offer, await offerMessage(release));
  }
  const bare = await bareTarget(o.dir, o.heartbeatMs, offer);
  let fanout: BareFanout | undefined;
  try {
    const load = await runFleetLoad(
      bare,
      {
        ...o.plan,
        ...(o.stormDowntimeMs === undefined ? {} : { stormDowntimeMs: o.stormDowntimeMs }),
        ...(release === undefined
          ? {}
          : { simOptions: { restartMs: [0, 0], pins: [release.pin] }, instrument: true }),
      },
      {
        onStep: say,
        whileHeld: async (sims, held) => {
          if (release === undefined) return;
          const count = Math.ceil(held / 4);
          say(`bare: the fan-out's baseline, ${count} offers at once`);
          try {
            fanout = await measureBareFanout(bare, sims, count, release.version);
          } catch (error) {
            say(`bare fan-out failed: ${(error as Error).message}`);
          }
        },
      },
    );
    say(`bare: ${o.burst.agents} agents connecting at once`);
    const burst = await handshakeBurst(bare, {
      ...o.burst,
      stateDir: join(o.dir, "handshake-bare"),
      label: "bare",
    });
    return { load, burst, fanout };
  } finally {
    await bare.stop();
  }
}
