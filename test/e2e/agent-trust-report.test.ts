/**
 * A real Agent's freeze reaches a real Control's operator: the Agent (`--tuf-refresh 1s`)
 * refreshes its TUF metadata on its own, and when the timestamp it is served has expired it
 * tells Control (TrustStatus under trust.v1), which shows the node frozen in `node show`
 * and the `agent_control_nodes_trust_frozen` gauge; fresh metadata clears both. The metadata
 * comes from a test repository on loopback (the channel's signing is not under test here).
 */
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NodeService } from "../../proto/gen/agentcontrol/admin/v1/node_pb.js";
import { TestTufRepo } from "../helpers/tuf-repo.js";
import { type CampaignFixture, campaignFixture } from "../integration/campaign-fixture.js";
import { enrollFlags, waitOnline } from "./agent-campaign-fixture.js";
import { buildAgent, eventually, type RunningAgent, startAgent } from "./agent-fixture.js";

const NODE = "trust-report-1";

describe("a real Agent's freeze, as a real Control shows it", () => {
  let fx: CampaignFixture;
  let repo: TestTufRepo;
  let agent: RunningAgent | undefined;

  beforeAll(async () => {
    const dir = await mkdtemp(join(tmpdir(), "agent-trust-report-"));
    const artifact = join(dir, "agent-1.0.0.mjs");
    await buildAgent("1.0.0", artifact);
    fx = await campaignFixture({ timeouts: { heartbeatSeconds: 2, offlineAfterSeconds: 10 } });
    repo = await TestTufRepo.create();
    const root = join(dir, "root.json");
    await writeFile(root, repo.initialRoot);
    agent = startAgent(artifact, join(dir, "install"), [
      ...(await enrollFlags(fx, NODE, 60_000)),
      "--tuf-root",
      root,
      "--tuf-url",
      repo.base,
      "--tuf-refresh",
      "1s",
    ]);
    await waitOnline(fx.tc, NODE);
  }, 120_000);

  afterAll(async () => {
    await agent?.stop();
    await repo?.stop();
    await fx?.stop();
  });

  const node = async () => (await fx.tc.client(NodeService).getNode({ nodeId: NODE })).node;
  const frozenGauge = async () => {
    const text = await (await fetch(`${fx.tc.adminUrl}/metrics`)).text();
    return /^agent_control_nodes_trust_frozen (\d+)$/m.exec(text)?.[1];
  };

  it("is shown frozen while its timestamp is expired, and current again once it is fresh", async () => {
    expect((await node())?.capabilities).toContain("trust.v1");
    await repo.publishTimestamp(new Date(Date.now() - 60_000));
    const frozen = await eventually(
      async () => ((await node())?.trustFrozen ? await node() : undefined),
      "the node shown frozen",
      15_000,
    );
    expect(frozen?.trustReason).toMatch(/expired \(a freeze\)/);
    expect(frozen?.trustFrozenSince).toBeDefined();
    expect(await frozenGauge()).toBe("1");
    expect(frozen?.online).toBe(true);

    await repo.publishTimestamp(new Date(Date.now() + 3_600_000));
    await eventually(
      async () => ((await node())?.trustFrozen === false ? true : undefined),
      "the node shown current",
      15_000,
    );
    expect(await frozenGauge()).toBe("0");
  });
});
