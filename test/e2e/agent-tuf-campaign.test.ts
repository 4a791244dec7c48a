/**
 * The production path of the TUF channel with real processes: `agentctl tuf` signs root and
 * targets offline, a real Control serves them at `/tuf/` on its downloads listener and signs
 * snapshot and timestamp, a real Agent installed with the initial root.json upgrades through
 * a campaign to a release the channel lists, and refuses one the channel lists with other
 * bytes, its install directory untouched; Control refuses to start a campaign to a release
 * the channel does not list.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CampaignPhase, NodeState } from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { AgentctlTufRepo } from "../helpers/tuf-channel.js";
import {
  type CampaignFixture,
  campaignFixture,
  isDone,
  quickSpec,
  waitForCampaign,
} from "../integration/campaign-fixture.js";
import {
  enrollFlags,
  PLATFORM,
  registerAgentRelease,
  waitOnline,
} from "./agent-campaign-fixture.js";
import {
  agentStatus,
  buildAgent,
  eventually,
  type RunningAgent,
  startAgent,
} from "./agent-fixture.js";

const NODE = "tuf-node-1";

describe("a real Agent on a TUF release channel served by a real Control", () => {
  let fx: CampaignFixture;
  let dir = "";
  let agent: RunningAgent | undefined;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "agent-tuf-"));
    const channel = await AgentctlTufRepo.create(dir, ["root", "targets", "snapshot", "timestamp"]);
    const repo = channel.repo;
    const [, v110, v120] = await Promise.all(
      ["1.0.0", "1.1.0", "1.2.0"].map((v) => buildAgent(v, join(dir, `agent-${v}.mjs`))),
    );
    await channel.init({
      root: ["root"],
      targets: "targets",
      snapshot: "snapshot",
      timestamp: "timestamp",
    });
    await channel.addTarget("1.1.0", 11, PLATFORM, join(dir, "agent-1.1.0.mjs"));
    // 1.2.0 listed with other bytes than the release registered with Control (a mislisting).
    await channel.addTarget("1.2.0", 12, PLATFORM, join(dir, "agent-1.1.0.mjs"));
    await channel.sign("targets", "targets");
    await writeFile(join(dir, "root.json"), await readFile(join(repo, "1.root.json")));
    fx = await campaignFixture({
      timeouts: {
        reconnectSeconds: 30,
        heartbeatSeconds: 2,
        offlineAfterSeconds: 10,
        configGraceSeconds: 0,
      },
      downloads: { addr: "127.0.0.1:0" },
      tuf: {
        dir: repo,
        snapshotKey: channel.key("snapshot"),
        timestampKey: channel.key("timestamp"),
      },
    });
    await registerAgentRelease(fx, "1.1.0", 11, v110!);
    await registerAgentRelease(fx, "1.2.0", 12, v120!);
    await registerAgentRelease(fx, "1.3.0", 13, v120!);
    agent = startAgent(join(dir, "agent-1.0.0.mjs"), join(dir, "install"), [
      ...(await enrollFlags(fx, NODE, 20_000)),
      "--tuf-root",
      join(dir, "root.json"),
      "--tuf-url",
      `${fx.tc.control.downloadsUrl}/tuf/`,
    ]);
    await waitOnline(fx.tc, NODE, "1.0.0");
  }, 180_000);

  afterAll(async () => {
    await agent?.stop();
    await fx?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const status = () => agentStatus(join(dir, "agent-1.0.0.mjs"), join(dir, "install"));

  it("refuses to start a campaign to a registered release the channel does not list", async () => {
    const refused = await fx.campaigns.startCampaign({ spec: quickSpec("1.3.0", [5, 100]) }).then(
      () => undefined,
      (error: Error) => error,
    );
    expect(refused?.message).toMatch(/1\.3\.0 is not listed in the release channel's TUF targets/);
  });

  it("the Agent refuses a release the channel lists with other bytes; nothing is installed", async () => {
    const started = await fx.campaigns.startCampaign({ spec: quickSpec("1.2.0", [5, 100]) });
    const done = await waitForCampaign(fx.campaigns, started.campaign?.id ?? "", isDone, 60_000);
    expect(CampaignPhase[done.phase]).toBe("ROLLED_BACK");
    const { nodes } = await fx.campaigns.getCampaign({ id: done.id });
    expect(nodes.map((n) => NodeState[n.state])).toEqual(["FAILED"]);
    expect(nodes[0]?.message).toMatch(/untrusted_release|do not list/);
    expect(await status()).toMatchObject({
      current: "1.0.0",
      installed: ["1.0.0"],
      confirmedSequence: "0",
    });
  }, 90_000);

  it("upgrades through a campaign to the release the channel lists, and is confirmed", async () => {
    const started = await fx.campaigns.startCampaign({ spec: quickSpec("1.1.0", [5, 100]) });
    const done = await waitForCampaign(fx.campaigns, started.campaign?.id ?? "", isDone, 60_000);
    expect(CampaignPhase[done.phase]).toBe("COMPLETED");
    await waitOnline(fx.tc, NODE, "1.1.0");
    const settled = await eventually(async () => {
      const s = await status();
      return s.confirmedSequence === "11" ? s : undefined;
    }, "confirmed sequence 11");
    expect(settled).toMatchObject({ current: "1.1.0", installed: ["1.1.0"] });
    expect((settled as unknown as { trust: { frozen: boolean } }).trust).toMatchObject({
      frozen: false,
    });
  }, 90_000);
});
