/**
 * The fleet the `agentctl campaign` end-to-end tests run against: a real Control with
 * campaigns quick enough to watch (no minimum batch duration, a 100 ms worker, 200 ms
 * heartbeats), signed releases registered, and six simulated agents that verify and apply
 * them, failing every upgrade to 1.2.0.
 */
import { type Fleet, startFleet } from "../../agent-sim/index.js";
import {
  buildManifest,
  createEnvelope,
  generateKeyPair,
  type ReleaseKeyPair,
  serializeEnvelope,
  sha256Hex,
  signEnvelope,
} from "../../control/shared/release/index.js";
import { ReleaseService } from "../../proto/gen/agentcontrol/admin/v1/release_pb.js";
import { startTestControl, type TestControl } from "../helpers/control.js";

const ARTIFACT = new TextEncoder().encode("simulated agent binary");

/** Two batches of half the fleet each, with no minimum duration. */
export const BATCHES = ["--batches", "50:0s,100:0s"];

/** A running Control, its fleet, and the environment that points `agentctl` at it. */
export interface CliFleet {
  readonly tc: TestControl;
  readonly fleet: Fleet;
  /** `AGENTCTL_SERVER` and `AGENTCTL_TOKEN` (the operator's). */
  readonly env: Record<string, string>;
  /** Stops the agents, then Control. */
  stop(): Promise<void>;
}

async function register(tc: TestControl, key: ReleaseKeyPair, version: string, sequence: number) {
  const manifest = buildManifest({
    version,
    sequence,
    expires: new Date(Date.now() + 3_600_000),
    artifacts: {
      "linux-amd64": { sha256: sha256Hex(ARTIFACT), size: ARTIFACT.length, file: "agent" },
    },
  });
  const envelope = await signEnvelope(createEnvelope(manifest), key.privateKey);
  await tc.client(ReleaseService).registerRelease({
    envelope: new TextEncoder().encode(serializeEnvelope(envelope)),
    artifacts: [{ platform: "linux-amd64", content: ARTIFACT }],
  });
}

/**
 * Starts Control, registers `releases` (version, sequence) for linux-amd64 signed by one
 * fresh pinned key, and waits until six agents named `idPrefix…` are welcomed.
 */
export async function startCliFleet(
  idPrefix: string,
  releases: readonly (readonly [string, number])[],
): Promise<CliFleet> {
  const key = await generateKeyPair();
  const tc = await startTestControl({
    config: {
      release: { pins: [key.pin], threshold: 1 },
      policy: { minBatchDurationSeconds: 0, firstBatchMaxPercent: 50 },
      worker: { intervalMs: 100 },
      timeouts: { heartbeatSeconds: 0.2, reconnectSeconds: 30, configGraceSeconds: 0 },
    },
  });
  let fleet: Fleet | undefined;
  try {
    for (const [version, sequence] of releases) await register(tc, key, version, sequence);
    fleet = await startFleet({
      server: tc.agentAddress,
      joinToken: await tc.joinToken(),
      count: 6,
      idPrefix,
      pins: [key.pin],
      restartMs: [50, 150],
      failVersions: ["1.2.0"],
    });
    await fleet.waitUntil((f) => f.welcomedCount() === 6, 20_000, "6 agents welcomed");
  } catch (error) {
    await fleet?.stop();
    await tc.stop();
    throw error;
  }
  const started = fleet;
  return {
    tc,
    fleet: started,
    env: { AGENTCTL_SERVER: tc.adminUrl, AGENTCTL_TOKEN: tc.operatorToken },
    stop: async () => {
      await started.stop();
      await tc.stop();
    },
  };
}
