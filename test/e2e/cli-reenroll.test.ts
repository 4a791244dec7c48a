/**
 * Re-enrolling a node that already exists takes an operator's explicit step, through the
 * real agentctl binary against a real Control: `node reset ID` (lets one join-token
 * enrollment of ID through), `token create --node ID…` (a token for those ids only) and
 * `token create --allow-reenroll` (a token that may re-enroll any id). Every re-enrollment
 * is in the audit log with the join token as its actor, the node and the peer address.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentctl } from "../helpers/agentctl.js";
import { startTestControl, type TestControl } from "../helpers/control.js";
import { hello, openRawStream } from "../helpers/raw-agent.js";

interface AuditJson {
  events: {
    actor: string;
    actorIp: string;
    action: string;
    nodeId?: string;
    message: string;
    detailJson: string;
  }[];
}

interface TokenJson {
  token: { id: string; nodeIds?: string[]; allowReenroll?: boolean };
  secret: string;
}

describe("agentctl: re-enrolling an existing node takes an operator's step", {
  timeout: 120_000,
}, () => {
  let tc: TestControl;
  let emptyDataDir: string;
  let operator: Record<string, string>;

  beforeAll(async () => {
    tc = await startTestControl();
    emptyDataDir = await mkdtemp(join(tmpdir(), "agentctl-reenroll-"));
    operator = {
      AGENTCTL_SERVER: tc.adminUrl,
      AGENTCTL_TOKEN: tc.operatorToken,
      AGENT_CONTROL_DATA_DIR: emptyDataDir,
    };
  });

  afterAll(async () => {
    await tc?.stop();
    await rm(emptyDataDir, { recursive: true, force: true });
  });

  const createToken = async (...flags: string[]): Promise<TokenJson> => {
    const result = await agentctl(["token", "create", "--json", ...flags], operator);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    return JSON.parse(result.stdout) as TokenJson;
  };

  /** Enrolls (or re-enrolls) `nodeId` with `token`; its new node token, or the refusal. */
  const enroll = async (
    token: string,
    nodeId: string,
  ): Promise<{ nodeToken: string } | { code: number; details: string }> => {
    const stream = openRawStream(tc.agentAddress, token);
    stream.send(hello(nodeId));
    const first = await stream.next(10_000).catch(() => undefined);
    if (first === undefined) {
      const end = await stream.ended;
      return { code: end.code, details: end.details };
    }
    stream.close();
    await stream.ended;
    if (first.body.case !== "welcome") throw new Error(`first message: ${first.body.case}`);
    return { nodeToken: first.body.value.nodeToken };
  };

  /** Whether a stream with `nodeToken` naming `nodeId` is welcomed, else its status code. */
  const welcomedWith = async (nodeToken: string, nodeId: string): Promise<true | number> => {
    const stream = openRawStream(tc.agentAddress, nodeToken);
    stream.send(hello(nodeId));
    const first = await stream.next(10_000).catch(() => undefined);
    if (first === undefined) return (await stream.ended).code;
    stream.close();
    await stream.ended;
    return first.body.case === "welcome" ? true : -1;
  };

  const nodeTokenOf = (outcome: Awaited<ReturnType<typeof enroll>>): string => {
    if (!("nodeToken" in outcome)) throw new Error(`refused: ${outcome.code} ${outcome.details}`);
    expect(outcome.nodeToken).toMatch(/^ant\./);
    return outcome.nodeToken;
  };

  const reenrollments = async (nodeId: string) => {
    const result = await agentctl(
      ["audit", "list", "--action", "node.reenroll", "--json"],
      operator,
    );
    expect(result.code).toBe(0);
    return (JSON.parse(result.stdout) as AuditJson).events
      .filter((e) => e.nodeId === nodeId)
      .map((e) => ({ ...e, detail: JSON.parse(e.detailJson) as Record<string, string> }));
  };

  it("node reset lets one join-token enrollment of that node through, audited", async () => {
    const { token: joinToken, secret } = await createToken("--description", "fleet");
    const oldToken = nodeTokenOf(await enroll(secret, "lost-1"));
    expect(await enroll(secret, "lost-1")).toMatchObject({ code: status.PERMISSION_DENIED });

    const reset = await agentctl(
      ["node", "reset", "lost-1", "--reason", "disk replaced", "--yes"],
      operator,
    );
    expect(reset).toEqual({
      code: 0,
      stdout:
        "node lost-1 reset: its node token no longer works; its next join-token enrollment is accepted once\n",
      stderr: "",
    });
    expect(await welcomedWith(oldToken, "lost-1")).toBe(status.UNAUTHENTICATED);
    const shown = await agentctl(["node", "show", "lost-1"], operator);
    expect(shown.stdout).toMatch(/^Reset: +yes: its next join-token enrollment is accepted once$/m);

    const newToken = nodeTokenOf(await enroll(secret, "lost-1"));
    expect(await enroll(secret, "lost-1")).toMatchObject({
      code: status.PERMISSION_DENIED,
      details: expect.stringContaining("agentctl node reset lost-1"),
    });
    expect(await welcomedWith(newToken, "lost-1")).toBe(true);
    const after = await agentctl(["node", "show", "lost-1"], operator);
    expect(after.stdout).not.toMatch(/^Reset:/m);

    const events = await reenrollments("lost-1");
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      actor: `join-token:${joinToken.id}`,
      actorIp: expect.stringMatching(/127\.0\.0\.1/),
      detail: { joinTokenId: joinToken.id, via: "reset" },
    });
    const resets = await agentctl(["audit", "list", "--action", "node.reset", "--json"], operator);
    const resetEvents = (JSON.parse(resets.stdout) as AuditJson).events;
    expect(resetEvents).toHaveLength(1);
    expect(resetEvents[0]).toMatchObject({ nodeId: "lost-1", actor: "admin" });
    expect(resetEvents[0]?.message).toMatch(/disk replaced/);
  });

  it("node reset of an unknown node fails with one line, and a viewer may not reset", async () => {
    const unknown = await agentctl(["node", "reset", "nobody-1", "--yes"], operator);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/no node with id "nobody-1"/);
    const viewer = await agentctl(["node", "reset", "lost-1", "--yes"], {
      ...operator,
      AGENTCTL_TOKEN: tc.viewerToken,
    });
    expect(viewer.code).toBe(1);
    expect(viewer.stderr).toMatch(/permission denied/);
  });

  it("a token for named node ids enrolls and re-enrolls only those", async () => {
    const fleet = await createToken();
    const existingToken = nodeTokenOf(await enroll(fleet.secret, "named-2"));
    const named = await createToken("--node", "named-1", "--node", "named-2");
    expect(named.token.nodeIds).toEqual(["named-1", "named-2"]);

    nodeTokenOf(await enroll(named.secret, "named-1"));
    const other = await enroll(named.secret, "other-1");
    expect(other).toMatchObject({
      code: status.PERMISSION_DENIED,
      details: `join token ${named.token.id} was created for other node ids and may not enroll node "other-1"`,
    });
    const newToken = nodeTokenOf(await enroll(named.secret, "named-2"));
    expect(await welcomedWith(existingToken, "named-2")).toBe(status.UNAUTHENTICATED);
    expect(await welcomedWith(newToken, "named-2")).toBe(true);
    // A fleet token still may not re-enroll the named node, and enrolled nothing else.
    expect(await enroll(fleet.secret, "named-1")).toMatchObject({
      code: status.PERMISSION_DENIED,
    });
    const shown = await agentctl(["node", "show", "other-1"], operator);
    expect(shown.code).toBe(1);

    const events = await reenrollments("named-2");
    expect(events.map((e) => [e.actor, e.detail.via])).toEqual([
      [`join-token:${named.token.id}`, "named"],
    ]);
    expect(await reenrollments("named-1")).toEqual([]); // a first enrollment is no re-enrollment

    const listed = await agentctl(["token", "list"], operator);
    expect(listed.stdout).toMatch(
      new RegExp(`^${named.token.id} +active .* nodes named-1,named-2 `, "m"),
    );
  });

  it("a token created with --allow-reenroll re-enrolls any existing node, audited", async () => {
    const fleet = await createToken();
    const oldToken = nodeTokenOf(await enroll(fleet.secret, "any-1"));
    const allowing = await createToken("--allow-reenroll");
    expect(allowing.token.allowReenroll).toBe(true);

    const newToken = nodeTokenOf(await enroll(allowing.secret, "any-1"));
    expect(await welcomedWith(oldToken, "any-1")).toBe(status.UNAUTHENTICATED);
    expect(await welcomedWith(newToken, "any-1")).toBe(true);
    nodeTokenOf(await enroll(allowing.secret, "any-2")); // new ids too

    const events = await reenrollments("any-1");
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      actor: `join-token:${allowing.token.id}`,
      actorIp: expect.stringMatching(/127\.0\.0\.1/),
      detail: { joinTokenId: allowing.token.id, via: "allow_reenroll" },
    });
    expect(events[0]?.message).toMatch(
      /^node any-1 re-enrolled with join token \w+ from \S+ \(a token allowing re-enrollment\)$/,
    );
  });

  it("refuses --node with --allow-reenroll, and an invalid node id", async () => {
    const both = await agentctl(["token", "create", "--node", "a-1", "--allow-reenroll"], operator);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/--node and --allow-reenroll cannot be used together/);
    const bad = await agentctl(["token", "create", "--node", "no spaces"], operator);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/"no spaces" is not a valid node id/);
  });
});
