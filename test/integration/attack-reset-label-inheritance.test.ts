/**
 * Attack (a reset id taken with another token keeps its trusted labels): after an operator's
 * `node reset db-7`, the holder of any ordinary join token (one given to web machines, say)
 * enrolled `db-7` before the real node came back, and the row kept the labels only the db
 * token or an administrator could give (`pool=db, canary=true`).
 *
 * Expected: a reset lets any token enroll the id again, but the trusted labels of the old
 * holder pass only to a token that could have given them: the token that enrolled the node, or
 * one created for its id or for re-enrollment. Any other token's enrollment carries its own
 * labels only.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NodeService } from "../../proto/gen/agentcontrol/admin/v1/node_pb.js";
import { startTestControl, type TestControl } from "../helpers/control.js";
import { connectAgent } from "../helpers/raw-agent.js";

const OWN_CHANNEL = { channelOptions: { "grpc.use_local_subchannel_pool": 1 } };

describe("a reset node enrolled again", { timeout: 60_000 }, () => {
  let tc: TestControl;
  beforeAll(async () => {
    tc = await startTestControl({ config: { enrollment: { agentReportedLabels: [] } } });
  });
  afterAll(async () => {
    await tc?.stop();
  });

  async function enroll(secret: string, nodeId: string): Promise<string | undefined> {
    const { stream, welcome } = await connectAgent(
      tc.agentAddress,
      secret,
      nodeId,
      {},
      OWN_CHANNEL,
    );
    stream.close();
    await stream.ended;
    return welcome.body.case;
  }

  async function dbNodeReset(nodeId: string) {
    const nodes = tc.client(NodeService);
    const dbToken = await nodes.createJoinToken({
      labels: { pool: "db", canary: "true" },
      nodeIds: [nodeId],
    });
    expect(await enroll(dbToken.secret, nodeId)).toBe("welcome");
    expect((await nodes.getNode({ nodeId })).node?.assignedLabels).toEqual({
      pool: "db",
      canary: "true",
    });
    await nodes.resetNode({ nodeId });
    return dbToken.secret;
  }

  it("with another generic token does not inherit the labels of the old holder", async () => {
    const nodes = tc.client(NodeService);
    await dbNodeReset("db-7");
    const web = await nodes.createJoinToken({ labels: { pool: "web" } });
    expect(await enroll(web.secret, "db-7")).toBe("welcome");
    const node = (await nodes.getNode({ nodeId: "db-7" })).node;
    // Before: {"pool":"db","canary":"true"}, pool db.
    expect(node?.assignedLabels).toEqual({ pool: "web" });
    expect(node?.pool).toBe("web");
  });

  it("with the token that enrolled it keeps them", async () => {
    const nodes = tc.client(NodeService);
    const dbToken = await dbNodeReset("db-8");
    expect(await enroll(dbToken, "db-8")).toBe("welcome");
    const node = (await nodes.getNode({ nodeId: "db-8" })).node;
    expect(node?.assignedLabels).toEqual({ pool: "db", canary: "true" });
    expect(node?.pool).toBe("db");
  });
});
