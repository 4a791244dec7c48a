/**
 * SIGKILL of a real Agent (its supervisor and the running Agent together) in the middle of
 * an upgrade leaves a node that comes back on one consistent version: the version the
 * `current` link names is the one installed, the one `agent status` prints, the one the
 * node reports to Control, and the campaign's verdict on the node agrees with it.
 * Kill points: the new version's files written (the link may or may not have moved), the
 * link moved to the new version before Control welcomed it, and a rollback's link moved back
 * before the reinstated version reported.
 */
import { existsSync } from "node:fs";
import { mkdtemp, readlink, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bundleAgent } from "../../agent/bundle.js";
import { NodeState } from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import {
  type CampaignFixture,
  isDone,
  quickSpec,
  waitForCampaign,
} from "../integration/campaign-fixture.js";
import {
  agentCampaignFixture,
  enrollFlags,
  heldSpec,
  registerAgentRelease,
  waitOnline,
} from "./agent-campaign-fixture.js";
import { eventually, type RunningAgent, settledStatus, startAgent } from "./agent-fixture.js";

/** How long a started version has to be welcomed before the supervisor reverts it. */
const START_DEADLINE_MS = 10_000;

describe("a real Agent SIGKILLed in the middle of an upgrade", () => {
  let fx: CampaignFixture;
  let dir = "";
  let first = "";
  const agents: RunningAgent[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "real-agent-kill-"));
    first = join(dir, "agent-1.0.0.mjs");
    await writeFile(first, await bundleAgent({ version: "1.0.0", platform: "linux-amd64" }));
    const next = await bundleAgent({ version: "1.1.0", platform: "linux-amd64" });
    fx = await agentCampaignFixture();
    await registerAgentRelease(fx, "1.1.0", 11, next);
  }, 120_000);

  afterAll(async () => {
    await Promise.all(agents.map((a) => a.stop()));
    await fx?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const killPoints: ReadonlyArray<[string, (install: string) => Promise<boolean>]> = [
    [
      "the new version's files are written",
      async (install) => existsSync(join(install, "versions", "1.1.0", "agent.mjs")),
    ],
    [
      "current points at the new version, not yet welcomed",
      async (install) =>
        (await readlink(join(install, "current")).catch(() => "")) === join("versions", "1.1.0"),
    ],
  ];

  it("comes back on the reinstated version when killed once a rollback moved current", async () => {
    const nodeId = "kill-rollback";
    const install = join(dir, nodeId);
    const args = await enrollFlags(fx, nodeId, START_DEADLINE_MS);
    const onVersion = (version: string) => waitOnline(fx.tc, nodeId, version);
    const before = startAgent(first, install, args);
    agents.push(before);
    await onVersion("1.0.0");
    const started = await fx.campaigns.startCampaign({
      spec: heldSpec("1.1.0", { nodeIds: [nodeId] }),
    });
    const id = started.campaign?.id ?? "";
    await onVersion("1.1.0");
    await fx.campaigns.abortCampaign({ id, rollback: true });
    await eventually(
      async () =>
        (await readlink(join(install, "current"))) === join("versions", "1.0.0") ? true : undefined,
      "current back on 1.0.0",
    );
    await before.kill();

    const after = startAgent(first, install, args);
    agents.push(after);
    await onVersion("1.0.0");
    await waitForCampaign(fx.campaigns, id, isDone, 60_000);
    const { nodes } = await fx.campaigns.getCampaign({ id });
    expect(NodeState[nodes[0]?.state ?? 0]).toBe("ROLLED_BACK");
    const status = await settledStatus(first, install);
    expect(status).toMatchObject({ current: "1.0.0", previous: "1.1.0" });
  }, 120_000);

  it.each(killPoints)(
    "comes back consistent when killed once %s",
    async (_name, reached) => {
      const nodeId = `kill-${agents.length + 1}`;
      const install = join(dir, nodeId);
      const args = await enrollFlags(fx, nodeId, START_DEADLINE_MS);
      const before = startAgent(first, install, args);
      agents.push(before);
      await waitOnline(fx.tc, nodeId);
      const started = await fx.campaigns.startCampaign({
        spec: quickSpec("1.1.0", [5, 100], { selector: { nodeIds: [nodeId] } }),
      });
      const id = started.campaign?.id ?? "";
      await eventually(
        async () => ((await reached(install)) ? true : undefined),
        "the kill point",
        30_000,
      );
      await before.kill();

      const after = startAgent(first, install, args);
      agents.push(after);
      const done = await waitForCampaign(fx.campaigns, id, isDone, 60_000);
      const status = await settledStatus(first, install);
      const current = status.current ?? "";
      expect(["1.0.0", "1.1.0"]).toContain(current);
      expect(await readlink(join(install, "current"))).toBe(join("versions", current));
      expect(existsSync(join(install, "versions", current, "agent.mjs"))).toBe(true);
      const reported = await waitOnline(fx.tc, nodeId, current);
      expect(reported.agentVersion).toBe(current);
      const { nodes } = await fx.campaigns.getCampaign({ id });
      const verdict = NodeState[nodes[0]?.state ?? 0];
      expect(verdict).toBe(current === "1.1.0" ? "SUCCEEDED" : "FAILED");
      expect(done.finishedAt).toBeDefined();
    },
    120_000,
  );
});
