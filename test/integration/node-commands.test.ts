/**
 * The node commands of the admin API (disable, enable, reset) on a real Control and database:
 * the registry row each writes, the one audit row per change (none for a command that changes
 * nothing), the error of an unknown node, and a reset closing the live stream.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { status } from "@grpc/grpc-js";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NodeService } from "../../proto/gen/agentcontrol/admin/v1/node_pb.js";
import { startTestControl, type TestControl } from "../helpers/control.js";
import { createTestDatabase, type TestDatabase } from "../helpers/database.js";
import { connectAgent } from "../helpers/raw-agent.js";

describe("node disable, enable and reset through the admin API", { timeout: 120_000 }, () => {
  let database: TestDatabase;
  let tc: TestControl;
  let sql: pg.Client;
  beforeAll(async () => {
    database = await createTestDatabase("node_commands");
    tc = await startTestControl({ database });
    sql = new pg.Client({ connectionString: database.url });
    await sql.connect();
  });
  afterAll(async () => {
    await sql?.end();
    await tc?.stop();
    await database?.drop();
  });

  const audits = async (nodeId: string) =>
    (
      await sql.query<{
        actor: string;
        action: string;
        campaign_id: string | null;
        node_id: string;
        message: string;
        detail: Record<string, unknown>;
      }>(
        `select actor, action, campaign_id, node_id, message, detail from audit_events
          where node_id = $1 and action like 'node.%' order by id`,
        [nodeId],
      )
    ).rows;
  const row = async (nodeId: string) =>
    (
      await sql.query<{
        enabled: boolean;
        disabled_reason: string;
        token_hash: string | null;
        reset_at: Date | null;
      }>("select enabled, disabled_reason, token_hash, reset_at from nodes where id = $1", [nodeId])
    ).rows[0];

  it("disables a node once with its reason and enables it once, an audit row for each change", async () => {
    const agent = await connectAgent(tc.agentAddress, await tc.joinToken(), "cmd-1");
    expect(agent.welcome.body.case).toBe("welcome");
    const nodes = tc.client(NodeService);
    const disabled = await nodes.disableNode({ nodeId: "cmd-1", reason: "bad disk" });
    expect(disabled.node?.enabled).toBe(false);
    expect(await row("cmd-1")).toMatchObject({ enabled: false, disabled_reason: "bad disk" });
    await nodes.disableNode({ nodeId: "cmd-1", reason: "again" });
    expect(await row("cmd-1")).toMatchObject({ disabled_reason: "bad disk" });
    const enabled = await nodes.enableNode({ nodeId: "cmd-1" });
    expect(enabled.node?.enabled).toBe(true);
    await nodes.enableNode({ nodeId: "cmd-1" });
    expect(await row("cmd-1")).toMatchObject({ enabled: true, disabled_reason: "" });
    expect(await audits("cmd-1")).toEqual([
      {
        actor: "admin",
        action: "node.disable",
        campaign_id: null,
        node_id: "cmd-1",
        message: "node cmd-1 disabled: bad disk",
        detail: {},
      },
      {
        actor: "admin",
        action: "node.enable",
        campaign_id: null,
        node_id: "cmd-1",
        message: "node cmd-1 enabled",
        detail: {},
      },
    ]);
    agent.stream.close();
  });

  it("resets a node: its token cleared, its stream closed, one audit row with the reason", async () => {
    const agent = await connectAgent(tc.agentAddress, await tc.joinToken(), "cmd-2");
    expect(agent.welcome.body.case).toBe("welcome");
    expect((await row("cmd-2"))?.token_hash).not.toBeNull();
    await tc.client(NodeService).resetNode({ nodeId: "cmd-2", reason: "reimaged" });
    const ended = await agent.stream.ended;
    expect(ended.code).toBe(status.PERMISSION_DENIED);
    expect(await row("cmd-2")).toMatchObject({ token_hash: null, enabled: true });
    expect((await row("cmd-2"))?.reset_at).toBeInstanceOf(Date);
    expect(await audits("cmd-2")).toEqual([
      {
        actor: "admin",
        action: "node.reset",
        campaign_id: null,
        node_id: "cmd-2",
        message:
          "node cmd-2 reset: its node token no longer works and its next join-token enrollment is accepted once: reimaged",
        detail: { reason: "reimaged" },
      },
    ]);
  });

  it("refuses each command on an unknown node node_not_found and writes nothing", async () => {
    const nodes = tc.client(NodeService);
    for (const call of [
      () => nodes.disableNode({ nodeId: "ghost", reason: "x" }),
      () => nodes.enableNode({ nodeId: "ghost" }),
      () => nodes.resetNode({ nodeId: "ghost", reason: "x" }),
    ]) {
      const error = await call().then(
        () => undefined,
        (e: unknown) => ConnectError.from(e),
      );
      expect(error?.code).toBe(Code.NotFound);
      expect(error?.rawMessage).toBe('no node with id "ghost"');
    }
    expect(await audits("ghost")).toEqual([]);
  });
});
