/**
 * A real Agent enrolled by its client certificate alone (mTLS, no join token, so no node
 * token) upgrades from a downloads listener that requires a node credential: it presents
 * its certificate to that listener (one of its `--download-origins`, over https), whose
 * client CA defaults to the agent stream's, and Control names the node from it.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CampaignPhase } from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { NODE_A, tlsPath } from "../fixtures/tls/index.js";
import {
  type CampaignFixture,
  campaignFixture,
  isDone,
  quickSpec,
  waitForCampaign,
} from "../integration/campaign-fixture.js";
import { PLATFORM, registerAgentRelease, waitOnline } from "./agent-campaign-fixture.js";
import {
  agentStatus,
  buildAgent,
  eventually,
  type RunningAgent,
  startAgent,
} from "./agent-fixture.js";

describe("a certificate-enrolled Agent downloads from a downloads listener requiring auth", () => {
  let fx: CampaignFixture;
  let dir = "";
  let agent: RunningAgent | undefined;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "real-agent-tls-download-"));
    await buildAgent("1.0.0", join(dir, "agent-1.0.0.mjs"));
    const next = await buildAgent("1.1.0", join(dir, "agent-1.1.0.mjs"));
    fx = await campaignFixture({
      timeouts: {
        reconnectSeconds: 30,
        heartbeatSeconds: 2,
        offlineAfterSeconds: 10,
        configGraceSeconds: 0,
      },
      downloads: { addr: "127.0.0.1:0", requireAuth: true },
      tls: {
        agent: { cert: tlsPath("server"), key: tlsPath("server", "key"), clientCa: tlsPath("ca") },
        // No clientCa of its own: it defaults to the agent stream's.
        downloads: { cert: tlsPath("server"), key: tlsPath("server", "key") },
      },
    });
    await registerAgentRelease(fx, "1.1.0", 11, next);
  }, 180_000);

  afterAll(async () => {
    await agent?.stop();
    await fx?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("enrolls by certificate, downloads 1.1.0 presenting it, and upgrades", async () => {
    const downloads = fx.tc.control.downloadsUrl ?? "";
    expect(downloads).toMatch(/^https:\/\//);
    const install = join(dir, "install");
    agent = startAgent(join(dir, "agent-1.0.0.mjs"), install, [
      "--server",
      fx.tc.agentAddress,
      "--pins",
      fx.key.pin,
      "--node-id",
      NODE_A,
      "--platform",
      PLATFORM,
      "--start-deadline-ms",
      "4000",
      "--ca",
      tlsPath("ca"),
      "--cert",
      tlsPath("node-a"),
      "--key",
      tlsPath("node-a", "key"),
      "--download-origins",
      downloads,
    ]);
    await waitOnline(fx.tc, NODE_A, "1.0.0");
    const started = await fx.campaigns.startCampaign({ spec: quickSpec("1.1.0", [5, 100]) });
    const done = await waitForCampaign(fx.campaigns, started.campaign?.id ?? "", isDone, 60_000);
    expect(CampaignPhase[done.phase], agent.logs()).toBe("COMPLETED");
    await waitOnline(fx.tc, NODE_A, "1.1.0");
    const status = await eventually(async () => {
      const s = (await agentStatus(join(dir, "agent-1.0.0.mjs"), install)) as Awaited<
        ReturnType<typeof agentStatus>
      > & { enrolledBy?: string };
      return s.confirmedSequence === "11" ? s : undefined;
    }, "confirmed sequence 11");
    expect(status).toMatchObject({ current: "1.1.0", enrolledBy: "certificate" });
    // The artifact crossed the downloads listener, authenticated, never refused.
    const metrics = await (await fetch(`${fx.tc.adminUrl}/metrics`)).text();
    expect(metrics).toMatch(/agent_control_downloads_total\{status="200"\} [1-9]/);
    expect(metrics).not.toMatch(/agent_control_downloads_total\{status="401"\}/);
  }, 120_000);
});
