import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Fleet, startFleet } from "../../agent-sim/index.js";
import { NodeService } from "../../proto/gen/agentcontrol/admin/v1/node_pb.js";
import { startTestControl, type TestControl } from "../helpers/control.js";
import { eventually } from "../helpers/raw-agent.js";

// 200 agents: enough to catch a restart that loses or duplicates nodes under load; the
// benchmark (`npm run bench`) holds 10,000 across restarts. 500 cost CI a minute more.
const COUNT = 200;

describe("a fleet of simulated agents across a Control restart", () => {
  let tc: TestControl;
  let fleet: Fleet | undefined;
  beforeAll(async () => {
    tc = await startTestControl({ config: { timeouts: { heartbeatSeconds: 2 } } });
  });
  afterAll(async () => {
    await fleet?.stop();
    await tc?.stop();
  });

  const onlineCount = async () => {
    const response = await tc.client(NodeService).listNodes({ online: true, pageSize: 1 });
    return response.totalSize;
  };

  it(`enrolls ${COUNT} agents, keeps every node across a restart, and all come back online`, async () => {
    fleet = await startFleet({
      server: tc.agentAddress,
      joinToken: await tc.joinToken(),
      count: COUNT,
      seed: 7,
      backoff: { baseMs: 100, capMs: 1000 },
    });
    await fleet.waitUntil((f) => f.welcomedCount() === COUNT, 60_000, "all agents welcomed");
    await eventually(async () => (await onlineCount()) === COUNT, 10_000, "all online");
    const before = await tc.client(NodeService).listNodes({ pageSize: 1000 });
    expect(before.totalSize).toBe(COUNT);

    await tc.restart();
    const after = await tc.client(NodeService).listNodes({ pageSize: 1000 });
    expect(after.nodes.map((n) => n.nodeId)).toEqual(before.nodes.map((n) => n.nodeId));
    expect(after.nodes.map((n) => n.firstSeen)).toEqual(before.nodes.map((n) => n.firstSeen));

    await fleet.waitUntil((f) => f.welcomedCount() === COUNT, 60_000, "all agents back");
    await eventually(async () => (await onlineCount()) === COUNT, 10_000, "all online again");
    const final = await tc.client(NodeService).listNodes({ pageSize: 1000 });
    expect(final.totalSize).toBe(COUNT);
  }, 240_000);
});
