/**
 * agentctl end to end: the real binary against a real Control (PostgreSQL, admin and
 * agent servers on loopback) with simulated agents connected.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Fleet, startFleet } from "../../agent-sim/index.js";
import { AuditService } from "../../proto/gen/agentcontrol/admin/v1/audit_pb.js";
import { agentctl } from "../helpers/agentctl.js";
import { startTestControl, type TestControl } from "../helpers/control.js";

describe("agentctl against a real Control", { timeout: 120_000 }, () => {
  let tc: TestControl;
  let fleet: Fleet;
  let emptyDataDir: string;
  let operator: Record<string, string>;

  beforeAll(async () => {
    tc = await startTestControl();
    emptyDataDir = await mkdtemp(join(tmpdir(), "agentctl-e2e-"));
    operator = {
      AGENTCTL_SERVER: tc.adminUrl,
      AGENTCTL_TOKEN: tc.operatorToken,
      AGENT_CONTROL_DATA_DIR: emptyDataDir,
    };
    fleet = await startFleet({
      server: tc.agentAddress,
      joinToken: await tc.joinToken(),
      count: 3,
      idPrefix: "cli",
      labels: { zone: "a" },
    });
    await fleet.waitUntil((f) => f.welcomedCount() === 3, 20_000, "3 agents welcomed");
  });

  afterAll(async () => {
    await fleet?.stop();
    await tc?.stop();
    await rm(emptyDataDir, { recursive: true, force: true });
  });

  it("lists the connected nodes as a table", async () => {
    const result = await agentctl(["node", "list"], operator);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^NODE +STATUS +VERSION +PLATFORM +POOL +CAMPAIGN +LAST SEEN$/);
    expect(lines.slice(1).map((l) => l.split(/ +/).slice(0, 4))).toEqual([
      ["cli-00001", "online", "1.0.0", "linux-amd64"],
      ["cli-00002", "online", "1.0.0", "linux-amd64"],
      ["cli-00003", "online", "1.0.0", "linux-amd64"],
    ]);
  });

  it("lists the nodes as protobuf JSON with --json", async () => {
    const result = await agentctl(["node", "list", "--json", "--label", "zone=a"], operator);
    expect(result.code).toBe(0);
    const json = JSON.parse(result.stdout) as {
      nodes: {
        nodeId: string;
        online?: boolean;
        enabled?: boolean;
        labels: Record<string, string>;
      }[];
      totalSize: number;
    };
    expect(json.totalSize).toBe(3);
    expect(json.nodes.map((n) => n.nodeId)).toEqual(["cli-00001", "cli-00002", "cli-00003"]);
    expect(
      json.nodes.every((n) => n.online === true && n.enabled === true && n.labels.zone === "a"),
    ).toBe(true);
  });

  it("fails without a token with one clear line and exit 1", async () => {
    const result = await agentctl(["node", "list"], {
      AGENTCTL_SERVER: tc.adminUrl,
      AGENT_CONTROL_DATA_DIR: emptyDataDir,
    });
    expect(result).toEqual({
      code: 1,
      stdout: "",
      stderr: `agentctl: not authenticated: pass --token or set AGENTCTL_TOKEN (the operator token is in ${join(emptyDataDir, "admin-token")})\n`,
    });
  });

  it("falls back to <data dir>/admin-token for a local server, sent over that data dir's admin socket", async () => {
    await writeFile(join(tc.dataDir, "admin-token"), `${tc.operatorToken}\n`, { mode: 0o600 });
    const result = await agentctl(
      ["node", "list", "--data-dir", tc.dataDir, "--server", tc.adminUrl],
      {},
    );
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("cli-00001");
    // A data dir with a token file but no Control of its own: the token goes nowhere.
    const dataDir = await mkdtemp(join(tmpdir(), "agentctl-e2e-token-"));
    try {
      await writeFile(join(dataDir, "admin-token"), `${tc.operatorToken}\n`, { mode: 0o600 });
      const refused = await agentctl(
        ["node", "list", "--data-dir", dataDir, "--server", tc.adminUrl],
        {},
      );
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/^agentctl: no Control is running with the data directory /);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it("refuses a viewer token that tries to disable a node, naming the missing role", async () => {
    const result = await agentctl(
      ["node", "disable", "cli-00002", "--token", tc.viewerToken, "--yes"],
      operator,
    );
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(
      /^agentctl: permission denied: this token's role cannot disable nodes.*\n$/,
    );
    expect(result.stderr.trimEnd().split("\n")).toHaveLength(1);
    const shown = await agentctl(["node", "show", "cli-00002", "--json"], operator);
    expect((JSON.parse(shown.stdout) as { node: { enabled?: boolean } }).node.enabled).toBe(true);
  });

  it("shows, disables and enables a node", async () => {
    const shown = await agentctl(["node", "show", "cli-00001"], operator);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/^Node: +cli-00001$/m);
    expect(shown.stdout).toMatch(/^Status: +online$/m);

    const disabled = await agentctl(
      ["node", "disable", "cli-00001", "--reason", "disk swap", "--yes"],
      operator,
    );
    expect(disabled).toEqual({ code: 0, stdout: "node cli-00001 disabled\n", stderr: "" });
    const listed = await agentctl(["node", "list", "--label", "zone=a"], operator);
    expect(listed.stdout).toMatch(/^cli-00001 +online,disabled /m);

    const enabled = await agentctl(["node", "enable", "cli-00001", "--json"], operator);
    expect(enabled.code).toBe(0);
    expect((JSON.parse(enabled.stdout) as { node: { enabled?: boolean } }).node.enabled).toBe(true);
  });

  it("passes Control's message through for an unknown node", async () => {
    const result = await agentctl(["node", "show", "no-such-node"], operator);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^agentctl: .*no-such-node.*\n$/);
  });

  it("creates, lists and revokes a join token", async () => {
    const created = await agentctl(
      ["token", "create", "--ttl", "1h", "--description", "rack 7", "--json"],
      operator,
    );
    expect(created.code).toBe(0);
    const { token, secret } = JSON.parse(created.stdout) as {
      token: { id: string; description: string; expiresAt: string };
      secret: string;
    };
    expect(secret.length).toBeGreaterThan(16);
    expect(token.description).toBe("rack 7");
    const ttlMs = Date.parse(token.expiresAt) - Date.now();
    expect(ttlMs).toBeGreaterThan(55 * 60_000);
    expect(ttlMs).toBeLessThanOrEqual(60 * 60_000);

    const listed = await agentctl(["token", "list"], operator);
    expect(listed.stdout).toMatch(new RegExp(`^${token.id} +active .* rack 7$`, "m"));

    const revoked = await agentctl(["token", "revoke", token.id], operator);
    expect(revoked).toEqual({ code: 0, stdout: `join token ${token.id} revoked\n`, stderr: "" });
    const after = await agentctl(["token", "list", "--json"], operator);
    const tokens = (JSON.parse(after.stdout) as { tokens: { id: string; revoked?: boolean }[] })
      .tokens;
    expect(tokens.find((t) => t.id === token.id)?.revoked).toBe(true);
  });

  /** The assigned labels of each node of the fixture. */
  const assigned = async () => {
    const listed = await agentctl(["node", "list", "--json", "--label", "zone=a"], operator);
    const { nodes } = JSON.parse(listed.stdout) as {
      nodes: { nodeId: string; assignedLabels?: Record<string, string> }[];
    };
    return Object.fromEntries(nodes.map((n) => [n.nodeId, n.assignedLabels ?? {}]));
  };
  const labelAudits = async () =>
    (await tc.client(AuditService).listAuditEvents({ action: "node.label" })).events.filter(
      (e) => e.nodeId === "",
    );

  it("labels every node a selector matches in one request, audited once with the count", async () => {
    const before = (await labelAudits()).length;
    const result = await agentctl(
      ["node", "label", "--selector", "zone=a", "tier=web", "stage=pilot"],
      operator,
    );
    expect(result).toEqual({
      code: 0,
      stdout: "labelled 3 nodes: set stage=pilot,tier=web\n",
      stderr: "",
    });
    const labels = await assigned();
    for (const id of ["cli-00001", "cli-00002", "cli-00003"]) {
      expect(labels[id]).toMatchObject({ tier: "web", stage: "pilot" });
    }
    const removed = await agentctl(
      ["node", "label", "--selector", "zone=a,tier=web", "stage-"],
      operator,
    );
    expect(removed.stdout).toBe("labelled 3 nodes: removed stage\n");
    expect(Object.values(await assigned()).some((l) => "stage" in l)).toBe(false);
    const audits = await labelAudits();
    expect(audits).toHaveLength(before + 2);
    expect(audits.map((a) => a.message)).toContain(
      "labels of 3 nodes matching tier=web,zone=a: removed stage",
    );
    const none = await agentctl(["node", "label", "--selector", "zone=nowhere", "x=y"], operator);
    expect(none).toEqual({ code: 0, stdout: "labelled 0 nodes: set x=y\n", stderr: "" });
  });

  it("labels nodes from a YAML or CSV file, each its own, all or none", async () => {
    const dir = await mkdtemp(join(tmpdir(), "agentctl-labels-"));
    try {
      const yaml = join(dir, "labels.yaml");
      await writeFile(yaml, "cli-00001:\n  rack: r1\n  row: '7'\ncli-00002:\n  rack: r2\n");
      const fromYaml = await agentctl(["node", "label", "--file", yaml], operator);
      expect(fromYaml).toEqual({
        code: 0,
        stdout: "labelled 2 nodes from labels.yaml\n",
        stderr: "",
      });
      const csv = join(dir, "labels.csv");
      await writeFile(csv, "node,rack,row\ncli-00003,r3,9\ncli-00002,,8\n");
      const fromCsv = await agentctl(["node", "label", "--file", csv], operator);
      expect(fromCsv.stdout).toBe("labelled 2 nodes from labels.csv\n");
      const labels = await assigned();
      expect(labels["cli-00001"]).toMatchObject({ rack: "r1", row: "7" });
      // An empty cell leaves that label as it is.
      expect(labels["cli-00002"]).toMatchObject({ rack: "r2", row: "8" });
      expect(labels["cli-00003"]).toMatchObject({ rack: "r3", row: "9" });

      // One unknown node: nothing changes, and the error names it.
      const bad = join(dir, "bad.csv");
      await writeFile(bad, "node,rack\ncli-00001,r9\nno-such-node,r9\n");
      const refused = await agentctl(["node", "label", "--file", bad], operator);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/^agentctl: .*no-such-node.*\n$/);
      expect((await assigned())["cli-00001"]).toMatchObject({ rack: "r1" });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("refuses a viewer token that tries to label nodes by selector", async () => {
    const result = await agentctl(
      ["node", "label", "--selector", "zone=a", "x=y", "--token", tc.viewerToken],
      operator,
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^agentctl: permission denied: .*\n$/);
    expect(Object.values(await assigned()).some((l) => "x" in l)).toBe(false);
  });

  it("shows the labels a join token assigns in token list", async () => {
    const created = await agentctl(
      ["token", "create", "--label", "pool=edge", "--label", "canary=true", "--json"],
      operator,
    );
    const { token } = JSON.parse(created.stdout) as { token: { id: string } };
    const listed = await agentctl(["token", "list"], operator);
    const [header] = listed.stdout.split("\n");
    expect(header).toMatch(/ LABELS /);
    expect(listed.stdout).toMatch(
      new RegExp(`^${token.id} +active .* canary=true,pool=edge `, "m"),
    );
  });

  it("prints only the secret with token create -q", async () => {
    const result = await agentctl(["token", "create", "-q"], operator);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^\S+\n$/);
  });
});
