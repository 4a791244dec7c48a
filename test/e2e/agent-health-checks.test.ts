/**
 * Health checks carried in a signed release, run by real Agents: two real Agents installed at
 * 1.0.0 take a campaign to 1.1.0, whose manifest names an HTTP check of a local port and a
 * command. On one node the command fails (what it reads on that node says so): its new version
 * never connects, its supervisor reverts it and it reports FAILED health_check_failed with the
 * check, its exit code and its output. Half the canaries failed: the batch breaches, the other
 * node is rolled back, and both run 1.0.0 again. `agentctl campaign show` prints the message.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ReleaseHealth } from "../../control/shared/release/index.js";
import { CampaignPhase, NodeState } from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { agentctl } from "../helpers/agentctl.js";
import { type LoopbackHttp, startLoopbackHttp } from "../helpers/loopback-http.js";
import {
  type CampaignFixture,
  isDone,
  quickSpec,
  waitForCampaign,
} from "../integration/campaign-fixture.js";
import { registerAgentRelease, waitOnline } from "./agent-campaign-fixture.js";
import type { RunningAgent } from "./agent-fixture.js";
import { type AgentWorld, startAgentWorld } from "./agent-world.js";

const FAILING = "health-node-a";
const PASSING = "health-node-b";
const DEADLINE_MS = 8_000;

describe("a release's health checks run by real Agents", () => {
  let world: AgentWorld;
  let fx: CampaignFixture;
  let api: LoopbackHttp | undefined;
  let apiHits = 0;
  const agents: RunningAgent[] = [];

  beforeAll(async () => {
    api = await startLoopbackHttp((_req, res) => {
      apiHits++;
      res.writeHead(200).end("ok\n");
    });
    world = await startAgentWorld({ prefix: "agent-health-", versions: ["1.0.0", "1.1.0"] });
    fx = world.fx;
    const health: ReleaseHealth = {
      checks: [
        {
          kind: "http",
          name: "local-api",
          port: Number(new URL(api.origin).port),
          path: "/healthz",
          timeoutSeconds: 5,
        },
        {
          kind: "command",
          name: "workload",
          command: "/bin/sh",
          args: ["-c", 'echo "probing the workload"; test ! -e "$HEALTH_MARK"'],
          timeoutSeconds: 10,
          exitCode: 0,
        },
      ],
      periodSeconds: 2,
      intervalSeconds: 1,
    };
    await registerAgentRelease(fx, "1.1.0", 11, world.bytes("1.1.0"), health);
    const broken = join(world.dir, "workload-broken");
    await writeFile(broken, "");
    // The passing node is labelled canary=true, so it comes first in canary order whatever the
    // fleet's order secret: the disruption budget offers one node at a time, and the passing
    // node has reached 1.1.0 when the failing one breaches the batch (else it is canceled).
    for (const [node, mark, flags] of [
      [FAILING, broken, []],
      [PASSING, join(world.dir, "no-such-file"), ["--labels", "canary=true"]],
    ] as const) {
      agents.push(
        await world.start({
          nodeId: node,
          startDeadlineMs: DEADLINE_MS,
          install: node,
          flags,
          env: { ...process.env, HEALTH_MARK: mark },
        }),
      );
    }
    await Promise.all([FAILING, PASSING].map((n) => waitOnline(fx.tc, n, "1.0.0")));
  }, 180_000);

  afterAll(async () => {
    await world?.stop();
    await api?.close();
  });

  it("fails the node whose check fails with the check's message, breaches, and both nodes run 1.0.0 again", async () => {
    // Both nodes are canaries: the check fails on half of them.
    const started = await fx.campaigns.startCampaign({
      spec: quickSpec("1.1.0", [5, 100], { minCanaries: 2 }),
    });
    const id = started.campaign?.id ?? "";
    const done = await waitForCampaign(fx.campaigns, id, isDone, 120_000);
    expect(CampaignPhase[done.phase]).toBe("ROLLED_BACK");
    const { nodes } = await fx.campaigns.getCampaign({ id });
    const failing = nodes.find((n) => n.nodeId === FAILING);
    expect(failing).toMatchObject({ state: NodeState.FAILED, code: "health_check_failed" });
    expect(failing?.message).toMatch(
      /1\.1\.0 failed health check "workload" \(\/bin\/sh -c .*\) exited with code 1, expected 0: probing the workload; reverted to 1\.0\.0/,
    );
    expect(NodeState[nodes.find((n) => n.nodeId === PASSING)?.state ?? 0]).toBe("ROLLED_BACK");
    for (const node of [FAILING, PASSING]) {
      await waitOnline(fx.tc, node, "1.0.0");
      const status = await world.status(node);
      expect(status).toMatchObject({ current: "1.0.0", pending: null });
    }
    // The passing node ran its checks for the stated period: at least two rounds of the HTTP check.
    expect(apiHits).toBeGreaterThanOrEqual(3);
    expect(agents[0]?.logs()).toMatch(/a health check failed/);

    const shown = await agentctl(["campaign", "show", id], {
      AGENTCTL_SERVER: fx.tc.adminUrl,
      AGENTCTL_TOKEN: fx.tc.operatorToken,
    });
    expect(shown.stdout).toContain('failed health check "workload"');
  }, 180_000);
});
