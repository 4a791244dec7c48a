/**
 * Shared setup of the campaign integration tests: a Control with tiny policy durations and
 * a pinned release key, signed releases registered through the admin API, a simulated fleet
 * over real streams, and helpers to wait for a campaign.
 */
import type { MessageInitShape } from "@bufbuild/protobuf";
import { type Client, ConnectError } from "@connectrpc/connect";
import { type Fleet, type FleetOptions, startFleet } from "../../agent-sim/index.js";
import type { ConfigInput } from "../../control/config-reader.js";
import type { ReleaseKeyPair } from "../../control/shared/release/index.js";
import { AuditService } from "../../proto/gen/agentcontrol/admin/v1/audit_pb.js";
import {
  type Campaign,
  CampaignPhase,
  CampaignService,
  type CampaignSpecSchema,
  NodeState,
} from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { startTestControl, type TestControl } from "../helpers/control.js";
import { makeKeys, registerTestRelease } from "../helpers/releases.js";

/** The version the fleet starts on, and the targets registered. */
export const OLD = "1.0.0";
export const NEW = "2.0.0";
export const NEWER = "3.0.0";

/** A Control, a fleet, and clients. */
export interface CampaignFixture {
  readonly tc: TestControl;
  readonly key: ReleaseKeyPair;
  readonly campaigns: Client<typeof CampaignService>;
  readonly audit: Client<typeof AuditService>;
  /** Starts a fleet (stopped by {@link CampaignFixture.stop}); waits until all are welcomed. */
  fleet(options: Omit<FleetOptions, "server" | "joinToken">, welcomed?: number): Promise<Fleet>;
  /** Registers a signed release of `version` (sequence from the version's major). */
  register(version: string): Promise<void>;
  stop(): Promise<void>;
}

/** Config of a fast Control: no minimum batch duration, short timeouts, a 200 ms worker. */
export function fastConfig(pin: string, extra: ConfigInput = {}): ConfigInput {
  return {
    release: { pins: [pin] },
    policy: { minBatchDurationSeconds: 0 },
    timeouts: {
      reconnectSeconds: 10,
      configGraceSeconds: 0,
      heartbeatSeconds: 2,
      offlineAfterSeconds: 10,
    },
    worker: { intervalMs: 200 },
    limits: { maxConcurrentHandshakes: 4096 },
    ...extra,
  };
}

/** Starts the Control of a test file. */
export async function campaignFixture(extra: ConfigInput = {}): Promise<CampaignFixture> {
  const [key] = await makeKeys(1);
  if (!key) throw new Error("no key");
  const tc = await startTestControl({ config: fastConfig(key.pin, extra) });
  const fleets: Fleet[] = [];
  return {
    tc,
    key,
    campaigns: tc.client(CampaignService),
    audit: tc.client(AuditService),
    async fleet(options, welcomed) {
      const fleet = await startFleet({
        server: tc.agentAddress,
        joinToken: await tc.joinToken(),
        pins: [key.pin],
        restartMs: [20, 120],
        // As an operator configures them: Control's downloads origin gets the node token.
        downloadOrigins: [tc.control.downloadsUrl ?? tc.adminUrl],
        ...options,
      });
      fleets.push(fleet);
      const want = welcomed ?? options.count;
      await fleet.waitUntil((f) => f.welcomedCount() >= want, 90_000, `${want} agents welcomed`);
      return fleet;
    },
    async register(version) {
      await registerTestRelease(tc, {
        version,
        sequence: Number(version.split(".")[0]) * 10,
        key,
      });
    },
    async stop() {
      await Promise.all(fleets.map((f) => f.stop()));
      await tc.stop();
    },
  };
}

/** A request spec as a plain object. */
export type SpecInit = MessageInitShape<typeof CampaignSpecSchema>;

/** A spec with zero-length batches at these cumulative percentages. */
export function quickSpec(
  targetVersion: string,
  percents: readonly number[],
  extra: SpecInit = {},
): SpecInit {
  return {
    targetVersion,
    batches: percents.map((percent) => ({ percent, minDuration: { seconds: 0n, nanos: 0 } })),
    ...extra,
  };
}

/** True when the campaign's phase has ended and it has finished. */
export function isDone(c: Campaign | undefined): boolean {
  return (
    c !== undefined &&
    c.finishedAt !== undefined &&
    c.phase !== CampaignPhase.RUNNING &&
    c.phase !== CampaignPhase.PAUSED &&
    c.phase !== CampaignPhase.ROLLING_BACK
  );
}

/** Polls GetCampaign until `predicate` holds; fails with the last state after `timeoutMs`. */
export async function waitForCampaign(
  client: Client<typeof CampaignService>,
  id: string,
  predicate: (c: Campaign) => boolean = isDone,
  timeoutMs = 60_000,
): Promise<Campaign> {
  const deadline = Date.now() + timeoutMs;
  let last: Campaign | undefined;
  for (;;) {
    last = (await client.getCampaign({ id, summaryOnly: true })).campaign;
    if (last && predicate(last)) return last;
    if (Date.now() > deadline) {
      throw new Error(
        `campaign ${id} did not reach the expected state: phase ${CampaignPhase[last?.phase ?? 0]}, ${JSON.stringify(
          last?.counts.map((c) => `${NodeState[c.state]}=${c.count}`),
        )}`,
      );
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Node ids per state name of a campaign's node rows. */
export async function nodesByState(
  client: Client<typeof CampaignService>,
  id: string,
): Promise<Map<string, string[]>> {
  const { nodes } = await client.getCampaign({ id });
  const out = new Map<string, string[]>();
  for (const n of nodes) {
    const name = NodeState[n.state].toLowerCase();
    out.set(name, [...(out.get(name) ?? []), n.nodeId]);
  }
  return out;
}

/** The error `call` was refused with; fails the test when it succeeds or throws anything else. */
export async function refusal(call: Promise<unknown>): Promise<ConnectError> {
  try {
    await call;
  } catch (error) {
    if (error instanceof ConnectError) return error;
    throw error;
  }
  throw new Error("the call succeeded");
}
