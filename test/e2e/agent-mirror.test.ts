/**
 * A real Agent whose artifacts come from a plain HTTP mirror (a Node.js `http` static server,
 * as object storage or nginx would serve them), not from Control: the signed manifest names
 * the mirror's URL, Control never proxies a byte, and the Agent verifies size and sha256 as
 * for Control's own downloads. A campaign with `--max-downloads 1` completes from the mirror,
 * and the mirror never receives the node token (it is not one of the Agent's origins). A
 * mirror serving other bytes behind a signed release fails the node with the Agent's
 * `sha256_mismatch`, the batch rolls back, and nothing of that release is installed.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type StaticMirror, startStaticMirror } from "../../agent-sim/bench/static-mirror.js";
import { CampaignPhase, NodeState } from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { ReleaseService } from "../../proto/gen/agentcontrol/admin/v1/release_pb.js";
import { makeRelease } from "../helpers/releases.js";
import {
  type CampaignFixture,
  isDone,
  quickSpec,
  waitForCampaign,
} from "../integration/campaign-fixture.js";
import { PLATFORM, waitOnline } from "./agent-campaign-fixture.js";
import { eventually } from "./agent-fixture.js";
import { type AgentWorld, startAgentWorld } from "./agent-world.js";

const NODE = "mirror-node-1";
const DEADLINE_MS = 4_000;

describe("a real Agent fetching its release from a plain HTTP mirror", () => {
  let world: AgentWorld;
  let fx: CampaignFixture;
  let mirror: StaticMirror;

  /** Registers `version` signed with the mirror's URL for `bytes`; the mirror serves `served`. */
  async function mirrored(
    version: string,
    sequence: number,
    bytes: Uint8Array,
    served: Uint8Array,
  ) {
    const release = await makeRelease({
      version,
      sequence,
      keys: [fx.key],
      platforms: [PLATFORM],
      content: () => bytes,
      urlBase: mirror.url,
    });
    mirror.put(`/${version}/${PLATFORM}`, served);
    await fx.tc.client(ReleaseService).registerRelease({ envelope: release.envelope });
  }

  beforeAll(async () => {
    mirror = await startStaticMirror();
    world = await startAgentWorld({
      prefix: "mirror-agent-",
      versions: ["1.0.0", "1.1.0", "1.2.0"],
    });
    fx = world.fx;
    const [v110, v120] = [world.bytes("1.1.0"), world.bytes("1.2.0")];
    await mirrored("1.1.0", 11, v110, v110);
    // Signed over 1.2.0's bytes; the mirror serves 1.1.0's instead (same kind of file, other hash).
    await mirrored("1.2.0", 12, v120, v110);
  }, 120_000);

  afterAll(async () => {
    await world?.stop();
    await mirror?.close();
  });

  const readStatus = () => world.status();

  it("installs 1.1.0 from the mirror under --max-downloads 1, with no credential sent there", async () => {
    await world.start({ nodeId: NODE, startDeadlineMs: DEADLINE_MS });
    await waitOnline(fx.tc, NODE, "1.0.0");
    const started = await fx.campaigns.startCampaign({
      spec: quickSpec("1.1.0", [5, 100], { maxDownloads: 1 }),
    });
    const id = started.campaign?.id ?? "";
    expect(started.campaign?.spec?.maxDownloads).toBe(1);
    const done = await waitForCampaign(fx.campaigns, id, isDone, 60_000);
    expect(CampaignPhase[done.phase]).toBe("COMPLETED");
    await waitOnline(fx.tc, NODE, "1.1.0");
    const status = await eventually(async () => {
      const s = await readStatus();
      return s.confirmedSequence === "11" ? s : undefined;
    }, "confirmed sequence 11");
    expect(status).toMatchObject({ current: "1.1.0", pending: null });
    const gets = mirror.requests.filter((r) => r.path === `/1.1.0/${PLATFORM}`);
    expect(gets.length).toBeGreaterThanOrEqual(1);
    expect(gets.every((r) => r.method === "GET" && !r.authorized)).toBe(true);
  }, 90_000);

  it("fails the node with sha256_mismatch when the mirror serves other bytes, and installs nothing", async () => {
    const started = await fx.campaigns.startCampaign({ spec: quickSpec("1.2.0", [5, 100]) });
    const id = started.campaign?.id ?? "";
    const done = await waitForCampaign(fx.campaigns, id, isDone, 60_000);
    expect(CampaignPhase[done.phase]).toBe("ROLLED_BACK");
    const { nodes } = await fx.campaigns.getCampaign({ id });
    expect(nodes.map((n) => NodeState[n.state])).toEqual(["FAILED"]);
    expect(nodes[0]?.message).toMatch(/sha256_mismatch/);
    expect(mirror.requests.some((r) => r.path === `/1.2.0/${PLATFORM}`)).toBe(true);
    expect(mirror.requests.every((r) => !r.authorized)).toBe(true);
    await waitOnline(fx.tc, NODE, "1.1.0");
    const status = await readStatus();
    expect(status).toMatchObject({ current: "1.1.0", pending: null, confirmedSequence: "11" });
    expect(status.installed).not.toContain("1.2.0");
  }, 90_000);
});
