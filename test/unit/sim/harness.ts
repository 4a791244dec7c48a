/**
 * Wiring shared by the simulator tests: a fake Control, an artifact server, a signing key,
 * and a fleet pointed at them, all torn down by {@link Harness.close}.
 */

import { type Fleet, type FleetOptions, startFleet } from "../../../agent-sim/index.js";
import type { ReleaseKeyPair } from "../../../control/shared/release/index.js";
import { OperationPhase } from "../../../proto/gen/agentcontrol/v1/agent_control_pb.js";
import { FakeControl, type FakeControlOptions } from "./fake-control.js";
import { ArtifactServer, newKey } from "./release-fixture.js";

/** Everything one test talks to. */
export interface Harness {
  control: FakeControl;
  artifacts: ArtifactServer;
  key: ReleaseKeyPair;
  fleet: Fleet;
  close(): Promise<void>;
}

/** Starts a fake Control, an artifact server and a fleet trusting a fresh key. */
export async function startHarness(
  fleetOptions: Partial<FleetOptions> = {},
  controlOptions: FakeControlOptions = {},
): Promise<Harness> {
  const control = await new FakeControl(controlOptions).start();
  const artifacts = await new ArtifactServer().start();
  const key = await newKey();
  const fleet = await startFleet({
    server: control.address,
    joinToken: "join-secret",
    count: 1,
    pins: [key.pin],
    restartMs: [50, 100],
    backoff: { baseMs: 20, capMs: 100, resetAfterMs: 60_000 },
    tickMs: 20,
    ...fleetOptions,
  });
  return {
    control,
    artifacts,
    key,
    fleet,
    async close() {
      await fleet.stop();
      await control.stop();
      await artifacts.stop();
    },
  };
}

/** The phase names of `reports`, e.g. ["ACCEPTED", "DOWNLOADING", …]. */
export function phases(reports: readonly { phase: OperationPhase }[]): string[] {
  return reports.map((r) => OperationPhase[r.phase] ?? String(r.phase));
}

/** Resolves when `predicate` holds; rejects after `timeoutMs`. */
export async function eventually(predicate: () => boolean, timeoutMs = 5000, what = "condition") {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
