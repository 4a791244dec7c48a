/**
 * What an Agent reports of its TUF metadata (TrustStatus, under trust.v1) reaches the node
 * registry: a real Control and PostgreSQL, a raw Agent stream on loopback, read back through
 * NodeService, `agentctl node list|show` and the metrics.
 */
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { status } from "@grpc/grpc-js";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordNodeTrust } from "../../control/db/node-trust.js";
import { NodeService } from "../../proto/gen/agentcontrol/admin/v1/node_pb.js";
import { agentctl } from "../helpers/agentctl.js";
import { startTestControl, type TestControl } from "../helpers/control.js";
import { connectAgent, eventually, type RawStream } from "../helpers/raw-agent.js";

const SINCE = new Date("2026-12-01T09:00:00.000Z");

describe("a node's reported trust state", () => {
  let tc: TestControl;
  beforeAll(async () => {
    tc = await startTestControl({});
  });
  afterAll(async () => {
    await tc?.stop();
  });

  const nodes = () => tc.client(NodeService);
  const cli = (args: string[]) =>
    agentctl(args, { AGENTCTL_SERVER: tc.adminUrl, AGENTCTL_TOKEN: tc.operatorToken });
  const nodeOf = async (nodeId: string) => (await nodes().getNode({ nodeId })).node;

  function trust(stream: RawStream, frozen: boolean, since?: Date, reason = "") {
    stream.send({
      body: {
        case: "trustStatus",
        value: {
          frozen,
          reason,
          checkedAt: timestampFromDate(new Date()),
          ...(since !== undefined ? { since: timestampFromDate(since) } : {}),
        },
      },
    });
  }

  it("welcomes trust.v1, stores frozen with its reason and first since, shows it, and clears it", async () => {
    const join = await tc.joinToken();
    const { stream, welcome } = await connectAgent(tc.agentAddress, join, "trust-1", {
      capabilities: ["upgrade.v1", "trust.v1"],
    });
    expect(welcome.body.case === "welcome" && welcome.body.value.capabilities).toEqual([
      "upgrade.v1",
      "trust.v1",
    ]);
    expect((await nodeOf("trust-1"))?.trustFrozen).toBe(false);

    trust(stream, true, SINCE, "TUF metadata expired (a freeze): timestamp.json is expired");
    await eventually(async () => (await nodeOf("trust-1"))?.trustFrozen === true, 10_000, "frozen");
    // Said again after a later refresh: the first since stays.
    trust(stream, true, new Date(SINCE.getTime() + 3_600_000), "still expired");
    await eventually(
      async () => (await nodeOf("trust-1"))?.trustReason === "still expired",
      10_000,
      "the new reason",
    );
    const frozen = await nodeOf("trust-1");
    expect(frozen?.trustFrozenSince && timestampDate(frozen.trustFrozenSince)).toEqual(SINCE);

    const list = await cli(["node", "list"]);
    expect(list.stdout).toMatch(/^trust-1\s+online,frozen\s/m);
    const show = await cli(["node", "show", "trust-1"]);
    expect(show.stdout).toMatch(
      /Trust:\s+frozen since 2026-12-01 09:00:00Z \(.+ ago\): new releases are refused; still expired/,
    );
    const metrics = await (await fetch(`${tc.adminUrl}/metrics`)).text();
    expect(metrics).toMatch(/^agent_control_nodes_trust_frozen 1$/m);

    trust(stream, false);
    await eventually(
      async () => (await nodeOf("trust-1"))?.trustFrozen === false,
      10_000,
      "cleared",
    );
    const cleared = await nodeOf("trust-1");
    expect({ reason: cleared?.trustReason, since: cleared?.trustFrozenSince }).toEqual({
      reason: "",
      since: undefined,
    });
    expect((await cli(["node", "list"])).stdout).toMatch(/^trust-1\s+online\s/m);
    stream.close();
  });

  it("ends the stream of a frozen status that does not say since when", async () => {
    const join = await tc.joinToken();
    const { stream } = await connectAgent(tc.agentAddress, join, "trust-2", {
      capabilities: ["upgrade.v1", "trust.v1"],
    });
    trust(stream, true, undefined, "expired");
    const end = await stream.ended;
    expect({ code: end.code, details: end.details }).toEqual({
      code: status.INVALID_ARGUMENT,
      details: "invalid TrustStatus: a frozen status needs since, a time from 1970 to 9999",
    });
    expect((await nodeOf("trust-2"))?.trustFrozen).toBe(false);
  });

  it("gives up a trust write held by a lock after its statement timeout, and frees its connection", async () => {
    const holder = new pg.Client({ connectionString: tc.database.url });
    await holder.connect();
    const pool = new pg.Pool({ connectionString: tc.database.url, max: 1 });
    try {
      await holder.query("begin");
      await holder.query("lock table nodes in access exclusive mode");
      const started = Date.now();
      await expect(
        recordNodeTrust(
          pool,
          { nodeId: "trust-1", frozenSince: SINCE, reason: "expired" },
          { timeoutMs: 300 },
        ),
      ).rejects.toThrow(/timeout/i);
      expect(Date.now() - started).toBeLessThan(5_000);
      // The connection that ran it is gone, so closing the pool waits on nothing.
      await pool.end();
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      await holder.query("rollback");
      await holder.end();
    }
  });
});
