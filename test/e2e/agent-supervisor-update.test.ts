/**
 * The single-executable Agent updates its own supervisor from a verified release, end to
 * end against a real Control, on a real install directory, with no `node` but the one a
 * module artifact needs on the PATH. The executable installed by hand (1.0.0, what the
 * service's ExecStart runs) supervises first. A signed release that carries its supervisor
 * is tried as the supervisor: one that crashes at start (1.1.0) and one that starts but
 * never brings the Agent back (1.2.0) are given up for the supervisor in use, the Agent is
 * reverted and the node reports the upgrade FAILED `supervisor_failed`; a real 1.3.0 executable
 * brings the Agent back, becomes the supervisor in use (the `supervisor` pointer moves) and
 * keeps being it when the service is started again from the executable installed by hand.
 */
import { existsSync } from "node:fs";
import { mkdir, readdir, readlink, symlink } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CampaignPhase, NodeState } from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import {
  type CampaignFixture,
  isDone,
  quickSpec,
  waitForCampaign,
} from "../integration/campaign-fixture.js";
import { waitOnline } from "./agent-campaign-fixture.js";
import { eventually, type RunningAgent } from "./agent-fixture.js";
import {
  exited,
  processesUnder,
  registerSupervisorRelease,
  supervisorStatus,
} from "./agent-supervisor-fixture.js";
import { type AgentWorld, startAgentWorld } from "./agent-world.js";

const NODE = "sup-node-1";
const DEADLINE_MS = 15_000;
const CRASHES = `process.stderr.write("supervisor 1.1.0 is broken\\n"); process.exit(3);`;
const HANGS = `process.stderr.write("supervisor 1.2.0 started and does nothing\\n"); setInterval(() => {}, 1000);`;

describe("the single-executable Agent updates its own supervisor", () => {
  let world: AgentWorld;
  let fx: CampaignFixture;
  let dir = "";
  let agent: RunningAgent | undefined;
  let env: NodeJS.ProcessEnv = {};

  beforeAll(async () => {
    world = await startAgentWorld({
      prefix: "sup-update-",
      versions: ["1.0.0", "1.3.0"],
      executable: true,
      prepare: async (d) => {
        await mkdir(join(d, "bin"));
        await symlink(process.execPath, join(d, "bin", "node"));
      },
    });
    ({ fx, dir } = world);
    env = { PATH: join(dir, "bin"), HOME: dir };
    const encode = (text: string) => new TextEncoder().encode(text);
    await registerSupervisorRelease(fx, "1.1.0", 11, encode(CRASHES));
    await registerSupervisorRelease(fx, "1.2.0", 12, encode(HANGS));
    await registerSupervisorRelease(fx, "1.3.0", 13, world.bytes("1.3.0"));
  }, 600_000);

  afterAll(async () => {
    await world?.stop();
  });

  const install = () => world.install();
  const supervisor = () => supervisorStatus(world.artifact(), install(), env);

  /** Runs a campaign (5 %, then 100 %) to `version`; returns the campaign and its only node. */
  async function campaignTo(version: string) {
    const started = await fx.campaigns.startCampaign({ spec: quickSpec(version, [5, 100]) });
    const id = started.campaign?.id ?? "";
    const done = await waitForCampaign(fx.campaigns, id, isDone, 120_000);
    const { nodes } = await fx.campaigns.getCampaign({ id });
    return { done, node: nodes[0] };
  }

  it("starts on the executable installed by hand, which is the supervisor in use", async () => {
    agent = await world.start({ nodeId: NODE, startDeadlineMs: DEADLINE_MS, env });
    await waitOnline(fx.tc, NODE, "1.0.0");
    expect(await supervisor()).toEqual({
      inUse: null,
      previous: null,
      trial: null,
      failure: null,
      installed: [],
    });
    expect(existsSync(join(install(), "supervisor"))).toBe(false);
  }, 90_000);

  it("gives up a new supervisor that crashes at start: the node reports supervisor_failed and runs 1.0.0 under the supervisor it had", async () => {
    const { node } = await campaignTo("1.1.0");
    expect(NodeState[node?.state ?? 0]).toBe("FAILED");
    // Control's campaign counts a FAILED report as apply_failed, with the Agent's code and why.
    expect(node?.code).toBe("apply_failed");
    expect(node?.message).toMatch(/supervisor_failed: the supervisor of 1\.1\.0 exited \(code 3\)/);
    await waitOnline(fx.tc, NODE, "1.0.0");
    const s = await supervisor();
    expect(s).toMatchObject({ inUse: null, trial: null, installed: [] });
    expect(s.failure).toMatchObject({ version: "1.1.0", code: "supervisor_failed" });
    expect((await world.status(undefined, env)).current).toBe("1.0.0");
    expect(agent?.logs()).toMatch(/supervisor 1\.1\.0 is broken/);
  }, 150_000);

  it("gives up a new supervisor that never brings the Agent back within the deadline, and stops it", async () => {
    const { node } = await campaignTo("1.2.0");
    expect(NodeState[node?.state ?? 0]).toBe("FAILED");
    expect(node?.code).toBe("apply_failed");
    expect(node?.message).toMatch(
      /supervisor_failed: the supervisor of 1\.2\.0 did not bring the Agent back \(welcomed by Control\) within/,
    );
    await waitOnline(fx.tc, NODE, "1.0.0");
    const s = await supervisor();
    expect(s).toMatchObject({ inUse: null, trial: null, installed: [] });
    expect(s.failure).toMatchObject({ version: "1.2.0", code: "supervisor_failed" });
    expect(agent?.logs()).toMatch(/supervisor 1\.2\.0 started and does nothing/);
    expect(await processesUnder(join(install(), "supervisors"))).toEqual([]);
  }, 150_000);

  it("makes a 1.3.0 that brings the Agent back the supervisor in use, keeping the previous one to fall back to", async () => {
    const { done, node } = await campaignTo("1.3.0");
    expect({
      phase: CampaignPhase[done.phase],
      state: NodeState[node?.state ?? 0],
      message: node?.message,
    }).toMatchObject({ phase: "COMPLETED", state: "SUCCEEDED" });
    await waitOnline(fx.tc, NODE, "1.3.0");
    const s = await eventually(async () => {
      const now = await supervisor();
      return now.inUse === "1.3.0" ? now : undefined;
    }, "the supervisor pointer on 1.3.0");
    expect(s).toMatchObject({ previous: null, trial: null, failure: null, installed: ["1.3.0"] });
    expect(await readlink(join(install(), "supervisor"))).toBe(join("supervisors", "1.3.0"));
    const running = await eventually(async () => {
      const p = await processesUnder(join(install(), "supervisors", "1.3.0"));
      return p.length === 1 ? p : undefined;
    }, "one supervisor running from supervisors/1.3.0");
    expect(running[0]?.args).toContain("run");
    await waitOnline(fx.tc, NODE, "1.3.0");
  }, 150_000);

  it("runs the 1.3.0 supervisor again when the service starts the executable installed by hand after a SIGKILL", async () => {
    await agent?.kill();
    if (agent) await exited(agent);
    expect(await processesUnder(install())).toEqual([]);
    agent = await world.start({ nodeId: NODE, startDeadlineMs: DEADLINE_MS, env });
    await waitOnline(fx.tc, NODE, "1.3.0");
    const running = await eventually(async () => {
      const p = await processesUnder(join(install(), "supervisors", "1.3.0"));
      return p.length === 1 ? p : undefined;
    }, "the 1.3.0 supervisor running again");
    expect(running[0]?.args).toContain("run");
    expect(await readdir(join(install(), "supervisors"))).toEqual(["1.3.0"]);
  }, 90_000);
});
