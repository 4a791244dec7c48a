/**
 * A power cut (SIGKILL of the supervisor, the supervisor on trial and the Agent at once) at
 * every step of a supervisor update leaves a node that comes back on a working supervisor
 * when the service manager starts it again (the stable path: the artifact installed by
 * hand, run again with the same flags), and that ends the update on the new supervisor.
 * Real `.mjs` Agents against a real Control, one node per kill point, one campaign; each
 * supervisor kills its own process group at its step (`AGENT_TEST_KILL_AT`).
 */
import { existsSync } from "node:fs";
import { readlink } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SUPERVISOR_UPDATE_STEPS } from "../../agent/core/supervisor-update.js";
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

const DEADLINE_MS = 15_000;

describe("a supervisor update survives a SIGKILL at every step", () => {
  let world: AgentWorld;
  let fx: CampaignFixture;
  const before = new Map<string, RunningAgent>();

  beforeAll(async () => {
    world = await startAgentWorld({ prefix: "sup-kill-", versions: ["1.0.0", "1.1.0"] });
    fx = world.fx;
    await registerSupervisorRelease(fx, "1.1.0", 11, world.bytes("1.1.0"));
    for (const step of SUPERVISOR_UPDATE_STEPS) {
      const agent = await world.start({
        nodeId: `kill-${step}`,
        install: step,
        startDeadlineMs: DEADLINE_MS,
        env: { ...process.env, AGENT_TEST_KILL_AT: step },
      });
      before.set(step, agent);
    }
    await Promise.all(SUPERVISOR_UPDATE_STEPS.map((s) => waitOnline(fx.tc, `kill-${s}`, "1.0.0")));
  }, 180_000);

  afterAll(async () => {
    await world?.stop();
  });

  it("every node comes back on a working supervisor and ends on the new one", async () => {
    const started = await fx.campaigns.startCampaign({ spec: quickSpec("1.1.0", [5, 100]) });
    const id = started.campaign?.id ?? "";
    await Promise.all(
      SUPERVISOR_UPDATE_STEPS.map(async (step) => {
        const agent = before.get(step);
        if (agent === undefined) throw new Error(`no agent for ${step}`);
        await Promise.race([
          exited(agent),
          new Promise((_, reject) =>
            setTimeout(() => reject(new Error(`${step}: not killed at its step`)), 90_000),
          ),
        ]);
        expect(agent.process.signalCode, step).toBe("SIGKILL");
        await eventually(
          async () => ((await processesUnder(world.install(step))).length === 0 ? true : undefined),
          `${step}: every process of the node gone`,
        );
        // The service manager starts the stable path again, without the fault.
        await world.start({
          nodeId: `kill-${step}`,
          install: step,
          startDeadlineMs: DEADLINE_MS,
          env: process.env,
        });
      }),
    );
    const done = await waitForCampaign(fx.campaigns, id, isDone, 120_000);
    const { nodes } = await fx.campaigns.getCampaign({ id });
    const verdicts = Object.fromEntries(nodes.map((n) => [n.nodeId, NodeState[n.state]]));
    expect(verdicts).toEqual(
      Object.fromEntries(SUPERVISOR_UPDATE_STEPS.map((s) => [`kill-${s}`, "SUCCEEDED"])),
    );
    expect(CampaignPhase[done.phase]).toBe("COMPLETED");
    for (const step of SUPERVISOR_UPDATE_STEPS) {
      const install = world.install(step);
      await waitOnline(fx.tc, `kill-${step}`, "1.1.0");
      const s = await eventually(async () => {
        const now = await supervisorStatus(world.artifact(), install);
        return now.inUse === "1.1.0" && now.trial === null ? now : undefined;
      }, `${step}: the supervisor pointer on 1.1.0`);
      expect(s.failure, step).toBeNull();
      expect(await readlink(join(install, "supervisor"))).toBe(join("supervisors", "1.1.0"));
      expect(existsSync(join(install, "supervisors", "1.1.0", "agent.mjs")), step).toBe(true);
      await eventually(async () => {
        const p = await processesUnder(join(install, "supervisors", "1.1.0"));
        return p.length === 1 && p[0]?.args.includes("run") ? p : undefined;
      }, `${step}: the 1.1.0 supervisor running`);
    }
  }, 300_000);
});
