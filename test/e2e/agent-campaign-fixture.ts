/**
 * The Control side of the end-to-end tests of real Agents: a campaign fixture timed for real
 * processes, releases registered with their artifacts, the flags that enroll an Agent with
 * that Control, and waits on what Control sees of a node.
 */
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ReleaseHealth } from "../../control/shared/release/index.js";
import type { SelectorSchema } from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { type Node, NodeService } from "../../proto/gen/agentcontrol/admin/v1/node_pb.js";
import { ReleaseService } from "../../proto/gen/agentcontrol/admin/v1/release_pb.js";
import type { TestControl } from "../helpers/control.js";
import { makeRelease } from "../helpers/releases.js";
import {
  type CampaignFixture,
  campaignFixture,
  quickSpec,
  type SpecInit,
} from "../integration/campaign-fixture.js";
import { eventually } from "./agent-fixture.js";

/** The platform every real Agent of these tests runs as. */
export const PLATFORM = "linux-amd64";

/**
 * A campaign fixture for real Agents, whose processes start slower than simulated ones:
 * reconnect within 30 s, heartbeats every 2 s, offline after 10 s, no config grace.
 */
export function agentCampaignFixture(): Promise<CampaignFixture> {
  return campaignFixture({
    timeouts: {
      reconnectSeconds: 30,
      heartbeatSeconds: 2,
      offlineAfterSeconds: 10,
      configGraceSeconds: 0,
    },
  });
}

/**
 * Registers a release of `version` at `sequence` for {@link PLATFORM}, signed by the
 * fixture's key, with `content` as its artifact uploaded to Control and `health` as its
 * signed health checks when given.
 */
export async function registerAgentRelease(
  fx: CampaignFixture,
  version: string,
  sequence: number,
  content: Uint8Array,
  health?: ReleaseHealth,
): Promise<void> {
  const release = await makeRelease({
    version,
    sequence,
    keys: [fx.key],
    platforms: [PLATFORM],
    content: () => content,
    ...(health === undefined ? {} : { health }),
  });
  await fx.tc.client(ReleaseService).registerRelease({
    envelope: release.envelope,
    artifacts: [...release.files].map(([platform, bytes]) => ({ platform, content: bytes })),
  });
}

/**
 * The flags of `agent run` that enroll `nodeId` on {@link PLATFORM} with the fixture's
 * Control by a fresh join token, trusting the fixture's key, with `--start-deadline-ms`.
 */
export async function enrollFlags(
  fx: CampaignFixture,
  nodeId: string,
  startDeadlineMs: number,
): Promise<string[]> {
  return [
    "--server",
    fx.tc.agentAddress,
    "--join-token",
    await fx.tc.joinToken(),
    "--pins",
    fx.key.pin,
    "--node-id",
    nodeId,
    "--platform",
    PLATFORM,
    "--start-deadline-ms",
    String(startDeadlineMs),
  ];
}

/**
 * Waits until Control sees `nodeId` online and, when `version` is given, reporting that
 * version; returns the node. Throws after {@link eventually}'s default time.
 */
export function waitOnline(tc: TestControl, nodeId: string, version?: string): Promise<Node> {
  return eventually(
    async () => {
      const n = (await tc.client(NodeService).getNode({ nodeId })).node;
      return n?.online && (version === undefined || n.agentVersion === version) ? n : undefined;
    },
    version === undefined ? `${nodeId} online` : `${nodeId} online on ${version}`,
  );
}

/**
 * A spec to `version` in two batches (5 % then 100 %) that each last an hour, so the
 * campaign is still running when the test acts on it (abort, kill); over `selector`'s nodes
 * when given, else all.
 */
export function heldSpec(
  version: string,
  selector?: MessageInitShape<typeof SelectorSchema>,
): SpecInit {
  return quickSpec(version, [5, 100], {
    ...(selector ? { selector } : {}),
    batches: [5, 100].map((percent) => ({ percent, minDuration: { seconds: 3600n, nanos: 0 } })),
  });
}
