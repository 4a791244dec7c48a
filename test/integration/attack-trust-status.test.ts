/**
 * A hostile Agent's TrustStatus against a real Control and PostgreSQL (a raw Agent stream on
 * loopback): what it reports must reach the operator's terminal as text, a flood of reports
 * must leave the node's latest state, and the stream must stay usable.
 */
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NodeService } from "../../proto/gen/agentcontrol/admin/v1/node_pb.js";
import { agentctl } from "../helpers/agentctl.js";
import { startTestControl, type TestControl } from "../helpers/control.js";
import {
  connectAgent,
  eventually,
  hello,
  openRawStream,
  type RawStream,
} from "../helpers/raw-agent.js";

describe("a hostile Agent's TrustStatus", () => {
  let tc: TestControl;
  beforeAll(async () => {
    tc = await startTestControl({});
  });
  afterAll(async () => {
    await tc?.stop();
  });

  const nodeOf = async (nodeId: string) => (await tc.client(NodeService).getNode({ nodeId })).node;

  function trust(stream: RawStream, frozen: boolean, reason: string, since = new Date()) {
    stream.send({
      body: {
        case: "trustStatus",
        value: {
          frozen,
          reason,
          checkedAt: timestampFromDate(new Date()),
          ...(frozen ? { since: timestampFromDate(since) } : {}),
        },
      },
    });
  }

  it("cannot write terminal escape sequences to the operator's `node show`", async () => {
    const join = await tc.joinToken();
    const { stream } = await connectAgent(tc.agentAddress, join, "trust-esc", {
      capabilities: ["upgrade.v1", "trust.v1"],
    });
    // Clears the screen, sets the window title, rings the bell, then moves the cursor up and
    // overwrites the line that says the node is frozen.
    trust(stream, true, "x\u001b[2J\u001b]0;owned\u0007\r\u001b[1Ano reason\u009b2K");
    await eventually(
      async () => (await nodeOf("trust-esc"))?.trustFrozen === true,
      10_000,
      "frozen",
    );
    const show = await agentctl(["node", "show", "trust-esc"], {
      AGENTCTL_SERVER: tc.adminUrl,
      AGENTCTL_TOKEN: tc.operatorToken,
    });
    expect(show.stdout).toMatch(/Trust:\s+frozen since /);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the attack is control characters
    expect(show.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    stream.close();
  });

  it("leaves the node's latest state after a flood of reports that flip it", async () => {
    const join = await tc.joinToken();
    const { stream } = await connectAgent(tc.agentAddress, join, "trust-flood", {
      capabilities: ["upgrade.v1", "trust.v1"],
    });
    const since = new Date(Date.now() - 60_000);
    for (let i = 0; i < 30; i++) trust(stream, i % 2 === 1, `flip ${i}`, since);
    trust(stream, true, "the last word", since);
    await eventually(
      async () => (await nodeOf("trust-flood"))?.trustReason === "the last word",
      15_000,
      "the latest report",
    );
    expect((await nodeOf("trust-flood"))?.trustFrozen).toBe(true);
    // The stream is still open: a heartbeat after the flood keeps it.
    stream.send({ body: { case: "heartbeat", value: {} } });
    const ended = await Promise.race([
      stream.ended.then(() => true),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 500)),
    ]);
    expect(ended).toBe(false);
    stream.close();
  });

  it("ends a stream that reports its trust before Welcome, and records nothing", async () => {
    const join = await tc.joinToken();
    const stream = openRawStream(tc.agentAddress, join);
    stream.send(hello("trust-early", { capabilities: ["upgrade.v1", "trust.v1"] }));
    trust(stream, true, "before welcome");
    const end = await stream.ended;
    expect(end.code).toBe(status.INVALID_ARGUMENT);
    // The node was never welcomed: it has no row at all, or one that is not frozen.
    const node = await nodeOf("trust-early").catch(() => undefined);
    expect(node?.trustFrozen ?? false).toBe(false);
  });

  it("ends a stream whose frozen report names a since outside 1970 to 9999, and records nothing", async () => {
    const join = await tc.joinToken();
    const { stream } = await connectAgent(tc.agentAddress, join, "trust-odd-since", {
      capabilities: ["upgrade.v1", "trust.v1"],
    });
    stream.send({
      body: {
        case: "trustStatus",
        value: { frozen: true, reason: "x", since: { seconds: -1n, nanos: 0 } },
      },
    });
    const end = await stream.ended;
    expect(end.code).toBe(status.INVALID_ARGUMENT);
    expect((await nodeOf("trust-odd-since"))?.trustFrozen).toBe(false);
  });

  it("records a report sent on a stream that did not negotiate trust.v1 like any other", async () => {
    const join = await tc.joinToken();
    const { stream, welcome } = await connectAgent(tc.agentAddress, join, "trust-no-cap", {
      capabilities: ["upgrade.v1"],
    });
    expect(welcome.body.case === "welcome" && welcome.body.value.capabilities).toEqual([
      "upgrade.v1",
    ]);
    trust(stream, true, "unnegotiated");
    await eventually(
      async () => (await nodeOf("trust-no-cap"))?.trustFrozen === true,
      10_000,
      "recorded",
    );
    stream.close();
  });

  it("ends a stream whose reason holds U+0000 (so the Agent must never send one), recording nothing", async () => {
    const join = await tc.joinToken();
    const { stream } = await connectAgent(tc.agentAddress, join, "trust-nul", {
      capabilities: ["upgrade.v1", "trust.v1"],
    });
    trust(stream, true, "quoted \u0000 byte");
    const end = await stream.ended;
    expect(end.code).toBe(status.INVALID_ARGUMENT);
    expect((await nodeOf("trust-nul"))?.trustFrozen).toBe(false);
  });
});
