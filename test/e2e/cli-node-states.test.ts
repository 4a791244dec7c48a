/**
 * What agentctl says about a node's identity and version, and about the audit log, the way an
 * operator meets it (issue 38, "Smaller, each tried and seen"): the real binary against a real
 * Control serving its admin API over TLS and admitting agents by client certificate (mTLS) or
 * join token. A revoked node reads `revoked`, not `offline`; resetting a node that enrolled by
 * certificate says it needs a new certificate; a node on a yanked release says so in `node
 * list`; an `http://` URL for the TLS admin port is answered with one line naming `https://`;
 * `audit list` takes `--since`/`--until` and keeps a certificate's long actor from widening
 * the table.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ReleaseKeyPair } from "../../control/shared/release/index.js";
import { AuditService } from "../../proto/gen/agentcontrol/admin/v1/audit_pb.js";
import { channelCredentials, NODE_A, tlsConfig, tlsFile, tlsPath } from "../fixtures/tls/index.js";
import { agentctl } from "../helpers/agentctl.js";
import { credentialsOf, issueNodeCertificate } from "../helpers/attack-certs.js";
import { startTestControl, type TestControl } from "../helpers/control.js";
import { connectAgent, type RawStream } from "../helpers/raw-agent.js";
import { makeKeys, registerTestRelease } from "../helpers/releases.js";

interface NodeJson {
  node: {
    nodeId: string;
    revoked: boolean;
    certificateEnrolled: boolean;
    agentVersion: string;
    agentVersionYanked: boolean;
  };
}

interface AuditJson {
  events: { actor: string; action: string; nodeId: string; time: string }[];
}

describe("agentctl on node states and the audit log (issue 38)", { timeout: 120_000 }, () => {
  let tc: TestControl;
  let key: ReleaseKeyPair;
  let emptyDataDir: string;
  let env: Record<string, string>;
  const streams: RawStream[] = [];
  const started = new Date();

  beforeAll(async () => {
    [key] = (await makeKeys(1)) as [ReleaseKeyPair];
    tc = await startTestControl({
      adminCa: tlsFile("ca"),
      config: {
        release: { pins: [key.pin] },
        tls: tlsConfig({ mtls: true, requireClientCert: false, admin: true }),
      },
    });
    emptyDataDir = await mkdtemp(join(tmpdir(), "agentctl-node-states-"));
    env = {
      AGENTCTL_SERVER: tc.adminUrl,
      AGENTCTL_TOKEN: tc.operatorToken,
      AGENTCTL_CA_FILE: tlsPath("ca"),
      AGENT_CONTROL_DATA_DIR: emptyDataDir,
    };
  });

  afterAll(async () => {
    for (const s of streams) s.close();
    await tc?.stop();
    if (emptyDataDir) await rm(emptyDataDir, { recursive: true, force: true });
  });

  /** Connects `nodeId` (a join token unless `credentials` carry a client certificate). */
  const connect = async (
    nodeId: string,
    options: { credentials?: ReturnType<typeof channelCredentials>; version?: string } = {},
  ) => {
    const token = options.credentials === undefined ? await tc.joinToken() : undefined;
    const { stream, welcome } = await connectAgent(
      tc.agentAddress,
      token,
      nodeId,
      { agentVersion: options.version ?? "1.0.0" },
      options.credentials ?? channelCredentials(),
    );
    expect(welcome.body.case).toBe("welcome");
    streams.push(stream);
    return stream;
  };

  const nodeRow = async (nodeId: string) => {
    const listed = await agentctl(["node", "list"], env);
    expect(listed.stderr).toBe("");
    return listed.stdout.split("\n").find((l) => l.startsWith(`${nodeId} `)) ?? "";
  };

  const shown = async (nodeId: string) => {
    const result = await agentctl(["node", "show", nodeId, "--json"], env);
    expect(result.code, result.stderr).toBe(0);
    return (JSON.parse(result.stdout) as NodeJson).node;
  };

  it("says revoked, not offline, for a revoked node in node list and node show", async () => {
    const stream = await connect(NODE_A, { credentials: channelCredentials("node-a") });
    expect(await nodeRow(NODE_A)).toMatch(new RegExp(`^${NODE_A} +online +1\\.0\\.0 `));

    const revoked = await agentctl(["node", "revoke", NODE_A, "--yes"], env);
    expect(revoked.code, revoked.stderr).toBe(0);
    await stream.ended;
    expect(await nodeRow(NODE_A)).toMatch(new RegExp(`^${NODE_A} +revoked +1\\.0\\.0 `));
    const show = await agentctl(["node", "show", NODE_A], env);
    expect(show.stdout).toMatch(/^Status: +revoked$/m);
    expect(await shown(NODE_A)).toMatchObject({ revoked: true, certificateEnrolled: true });
  });

  it("says a reset node that enrolled by certificate needs a new one, naming agentctl tls issue-node", async () => {
    const reset = await agentctl(["node", "reset", NODE_A, "--yes"], env);
    expect(reset).toEqual({
      code: 0,
      stdout: `node ${NODE_A} reset: it enrolled by client certificate, not a join token; its certificate stays refused since the node was revoked, so it needs a new certificate: agentctl tls issue-node ${NODE_A} --out DIR, then give its Agent --cert DIR/${NODE_A}.pem --key DIR/${NODE_A}.key\n`,
      stderr: "",
    });

    // A node that enrolled by join token keeps the join-token advice.
    await connect("states-token");
    const tokenReset = await agentctl(["node", "reset", "states-token", "--yes"], env);
    expect(tokenReset.stdout).toBe(
      "node states-token reset: its node token no longer works; its next join-token enrollment is accepted once\n",
    );
    expect(await shown("states-token")).toMatchObject({ certificateEnrolled: false });
  });

  it("keeps a certificate's long actor from widening the audit table, and prints it in full with --json", async () => {
    // The new certificate the reset asked for: its return is audited with its fingerprint.
    await connect(NODE_A, { credentials: credentialsOf(issueNodeCertificate(NODE_A)) });
    expect(await nodeRow(NODE_A)).toMatch(new RegExp(`^${NODE_A} +online `));

    const json = await agentctl(["audit", "list", "--action", "node.reenroll", "--json"], env);
    expect(json.code, json.stderr).toBe(0);
    const [event] = (JSON.parse(json.stdout) as AuditJson).events;
    expect(event?.actor).toMatch(/^certificate:/);
    const actor = event?.actor ?? "";
    expect(actor.length).toBeGreaterThan(95);

    const table = await agentctl(["audit", "list", "--action", "node.reenroll"], env);
    expect(table.code, table.stderr).toBe(0);
    const [header, row = ""] = table.stdout.trimEnd().split("\n");
    expect(header).toMatch(/^ID +TIME +ACTOR +ACTION /);
    expect(row).not.toContain(actor);
    expect(row).toContain(`${actor.slice(0, 31)}… `);
    // The ACTION column starts where the header says, 32 characters of actor and two spaces on.
    expect(row.indexOf("node.reenroll")).toBe(header?.indexOf("ACTION"));
  });

  it("marks a node's version (yanked) in node list and node show once its release is yanked", async () => {
    await registerTestRelease(tc, { version: "1.3.0", sequence: 13, key });
    await connect("states-yanked", { version: "1.3.0" });
    expect(await nodeRow("states-yanked")).toMatch(/^states-yanked +online +1\.3\.0 +linux-amd64 /);

    const yank = await agentctl(
      ["release", "yank", "1.3.0", "--reason", "bad build", "--yes"],
      env,
    );
    expect(yank.code, yank.stderr).toBe(0);
    expect(await nodeRow("states-yanked")).toMatch(
      /^states-yanked +online +1\.3\.0 \(yanked\) +linux-amd64 /,
    );
    // Nodes on a release that is not yanked are not marked.
    expect(await nodeRow("states-token")).toMatch(/ 1\.0\.0 +linux-amd64 /);
    const show = await agentctl(["node", "show", "states-yanked"], env);
    expect(show.stdout).toMatch(/^Version: +1\.3\.0 \(yanked\)$/m);
    expect(await shown("states-yanked")).toMatchObject({
      agentVersion: "1.3.0",
      agentVersionYanked: true,
    });
  });

  it("answers an http:// URL for the TLS admin port with one line naming https://", async () => {
    const plain = tc.adminUrl.replace(/^https:/, "http:");
    const result = await agentctl(["node", "list"], { ...env, AGENTCTL_SERVER: plain });
    expect(result).toEqual({
      code: 1,
      stdout: "",
      stderr: `agentctl: Control at ${plain} speaks TLS: use ${tc.adminUrl} (--server or AGENTCTL_SERVER)\n`,
    });
  });

  it("lists the audit events of a time range given as RFC 3339 times or durations ago", async () => {
    const ids = async (...flags: string[]) => {
      const result = await agentctl(["audit", "list", "--json", ...flags], env);
      expect(result.code, result.stderr).toBe(0);
      return (JSON.parse(result.stdout) as AuditJson).events.map((e) => e.action);
    };
    const all = await ids();
    expect(all).toContain("node.revoke");
    expect(await ids("--since", started.toISOString())).toEqual(all);
    expect(await ids("--since", "1h")).toEqual(all);
    expect(await ids("--until", "1h")).toEqual([]);
    expect(await ids("--since", new Date(Date.now() + 3_600_000).toISOString())).toEqual([]);

    // Only the events before the yank: a range that ends between two of them.
    const events = (
      JSON.parse((await agentctl(["audit", "list", "--json"], env)).stdout) as AuditJson
    ).events;
    const yank = events.find((e) => e.action === "release.yank");
    expect(yank).toBeDefined();
    const before = await ids("--until", yank?.time ?? "", "--since", started.toISOString());
    expect(before).not.toContain("release.yank");
    expect(before).toContain("node.revoke");

    const empty = await agentctl(["audit", "list", "--until", "1h"], env);
    expect(empty).toEqual({ code: 0, stdout: "", stderr: "No audit events.\n" });
  });

  it.each([
    [["--since", "yesterday"], 'invalid time "yesterday" for --since: use an RFC 3339 time'],
    [["--until", "2026-12-07"], 'invalid time "2026-12-07" for --until'],
    [["--since", "2026-02-30T10:00:00Z"], 'invalid time "2026-02-30T10:00:00Z" for --since'],
    [["--since", "1h", "--until", "2h"], "--until 2h ("],
  ])(
    "refuses audit list %j with exit 2 and one line, contacting nothing",
    async (flags, message) => {
      const result = await agentctl(["audit", "list", ...flags], env);
      expect(result.code).toBe(2);
      expect(result.stdout).toBe("");
      expect(result.stderr).toMatch(/^agentctl: [^\n]+\n$/);
      expect(result.stderr).toContain(message);
    },
  );

  it("is refused by Control too, naming the field, for a time range that ends before it starts", async () => {
    const now = Date.now();
    const refused = await tc
      .client(AuditService)
      .listAuditEvents({
        since: timestampFromMs(now),
        until: timestampFromMs(now - 1000),
      })
      .then(
        () => undefined,
        (error: unknown) => ConnectError.from(error),
      );
    expect(refused?.code).toBe(Code.InvalidArgument);
    expect(refused?.rawMessage).toMatch(/^until \(.*\) must be after since/);
  });
});
