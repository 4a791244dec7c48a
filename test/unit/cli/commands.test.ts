import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GROUPS } from "../../../cli/main.js";
import { type Node, NodeSchema } from "../../../proto/gen/agentcontrol/admin/v1/node_pb.js";
import { type FakeControl, startFakeControl } from "./fake-control.js";
import { runCli } from "./run-cli.js";

const NOW = new Date("2025-03-01T12:00:00Z");

function node(id: string, extra: Partial<Omit<Node, "$typeName">> = {}): Node {
  return create(NodeSchema, {
    nodeId: id,
    agentVersion: "1.0.0",
    platform: "linux-amd64",
    pool: "default",
    online: true,
    enabled: true,
    labels: { zone: "a" },
    capabilities: ["upgrade.v1"],
    lastSeen: timestampFromDate(new Date(NOW.getTime() - 12_000)),
    ...extra,
  });
}

let fake: FakeControl;
let env: Record<string, string>;

beforeAll(async () => {
  fake = await startFakeControl();
  env = { AGENTCTL_SERVER: fake.url, AGENTCTL_TOKEN: "operator-token" };
});

afterAll(async () => {
  await fake.stop();
});

describe("usage", () => {
  it.each([
    [
      ["nodes", "list"],
      'agentctl: unknown command "nodes"; did you mean "node"?; run "agentctl --help"\n',
    ],
    [
      ["node", "lst"],
      'agentctl: unknown command "node lst"; did you mean "list"?; run "agentctl node --help"\n',
    ],
    [
      ["campaing", "list"],
      'agentctl: unknown command "campaing"; did you mean "campaign"?; run "agentctl --help"\n',
    ],
    [["frobnicate"], 'agentctl: unknown command "frobnicate"; run "agentctl --help"\n'],
    [
      ["help", "campain"],
      'agentctl: no help for "campain"; did you mean "campaign"?; run "agentctl --help"\n',
    ],
    [
      ["node", "list", "--timeout", "soon"],
      'agentctl: invalid duration "soon" for --timeout: use hours, minutes and seconds such as 30m, 1h30m, 45s or 0s\n',
    ],
    [["node", "list", "--bogus"], "agentctl: unknown flag --bogus\n"],
    [
      ["node", "list", "--online", "--offline"],
      "agentctl: --online and --offline cannot be used together\n",
    ],
    [["node", "show"], "agentctl: missing argument ID\n"],
    [["node", "show", "a", "b"], 'agentctl: unexpected argument "b"\n'],
    [
      ["node", "list", "-o", "xml"],
      'agentctl: invalid value "xml" for --output: expected table, wide, json or yaml\n',
    ],
    [
      ["token", "create", "--ttl", "1d"],
      'agentctl: invalid duration "1d" for --ttl: use hours, minutes and seconds such as 30m, 1h30m, 45s or 0s\n',
    ],
    [["campaign", "start"], "agentctl: missing required flag --version\n"],
    [
      ["campaign", "plan", "--version", "1.0.0", "--threshold", "150"],
      'agentctl: invalid percentage "150" for --threshold: expected a whole number 0 to 100\n',
    ],
    [
      ["campaign", "list", "--phase", "done"],
      'agentctl: invalid value "done" for --phase: expected running, paused, rolling_back, completed, rolled_back, aborted, failed\n',
    ],
    [[], 'agentctl: missing command; run "agentctl --help"\n'],
  ])("agentctl %j exits 2 with one line on stderr and nothing on stdout", async (argv, stderr) => {
    const result = await runCli(argv, { env });
    expect(result).toEqual({ code: 2, stdout: "", stderr });
  });

  it.each([
    [["--help"], "Commands:"],
    [["campaign", "-h"], "Usage: agentctl campaign SUBCOMMAND"],
    [["campaign", "start", "--help"], "--exclude-tag K=V …"],
    [["release", "verify", "-h"], "Usage: agentctl release verify [flags] ENVELOPE"],
    [["node", "list", "--help"], "--server URL"],
    [["node", "list", "--help"], "--timeout DURATION"],
    [["help"], "Commands:"],
    [["help", "campaign"], "Usage: agentctl campaign SUBCOMMAND"],
    [["help", "campaign", "start"], "--exclude-tag K=V …"],
    [["help", "version"], "Usage: agentctl version [flags]"],
  ])("agentctl %j prints usage with flags and exits 0", async (argv, fragment) => {
    const result = await runCli(argv, { env });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(fragment);
    expect(result.stderr).toBe("");
  });

  it("lists each group in the root help with the summary its module declares", async () => {
    for (const entry of GROUPS) {
      const group = await entry.load();
      expect([group.name, group.summary]).toEqual([entry.name, entry.summary]);
    }
  });

  it("prints a bash completion script naming every group and a command's flags", async () => {
    const result = await runCli(["completion", "bash"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("complete -F _agentctl agentctl");
    expect(result.stdout).toContain('"campaign start") flags="');
    expect(result.stdout).toContain("--on-breach");
  });
});

describe("node commands against a Connect server", () => {
  it("lists nodes as an aligned table, sending the bearer token", async () => {
    fake.state.nodes = [
      node("node-a"),
      node("node-bb", { online: false, enabled: false, agentVersion: "0.9.0" }),
    ];
    const result = await runCli(["node", "list"], { env, now: () => NOW });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      [
        "NODE     STATUS            VERSION  PLATFORM     POOL     CAMPAIGN  LAST SEEN",
        "node-a   online            1.0.0    linux-amd64  default  -         12s ago",
        "node-bb  offline,disabled  0.9.0    linux-amd64  default  -         12s ago",
        "",
      ].join("\n"),
    );
    expect(fake.state.calls.at(-1)).toEqual({
      method: "ListNodes",
      authorization: "Bearer operator-token",
    });
  });

  it("adds the holding Control, labels and capabilities with --output wide", async () => {
    fake.state.nodes = [
      node("node-a", { heldBy: "control-7f3a" }),
      node("node-b", { online: false }),
    ];
    const result = await runCli(["node", "list", "-o", "wide"], { env, now: () => NOW });
    const [header, first, second] = result.stdout.split("\n");
    expect(header).toMatch(/LAST SEEN +CONTROL +LABELS/);
    expect(first).toMatch(/ago +control-7f3a +zone=a/);
    expect(second).toMatch(/ago +- +zone=a/);
    expect(result.stdout).toContain("upgrade.v1");
  });

  it("prints protobuf JSON with --json and follows every page with --all", async () => {
    fake.state.nodes = [node("n1"), node("n2"), node("n3")];
    const result = await runCli(["node", "list", "--json", "--all", "--page-size", "2"], { env });
    expect(result.code).toBe(0);
    const json = JSON.parse(result.stdout) as {
      nodes: { nodeId: string; online: boolean }[];
      totalSize: number;
    };
    expect(json.nodes.map((n) => n.nodeId)).toEqual(["n1", "n2", "n3"]);
    expect(json.totalSize).toBe(3);
    expect(json.nodes[0]?.online).toBe(true);
  });

  it("writes every JSON field, defaults included, so scripts can test online == false", async () => {
    fake.state.nodes = [node("n1", { online: false, enabled: false })];
    const result = await runCli(["node", "list", "--json"], { env });
    const json = JSON.parse(result.stdout) as {
      nodes: Record<string, unknown>[];
      nextPageToken: string;
    };
    expect(json.nodes[0]).toMatchObject({
      online: false,
      enabled: false,
      activeCampaignId: "",
      confirmedSequence: "0",
    });
    expect(json.nextPageToken).toBe("");
  });

  it("says how to get the next page when not fetching all", async () => {
    fake.state.nodes = [node("n1"), node("n2"), node("n3")];
    const result = await runCli(["node", "list", "--page-size", "2"], { env, now: () => NOW });
    expect(result.stderr).toBe("2 of 3 nodes shown; more with --page-token 2 or --all\n");
  });

  it("filters by label and online state", async () => {
    fake.state.nodes = [
      node("n1"),
      node("n2", { labels: { zone: "b" } }),
      node("n3", { online: false }),
    ];
    const result = await runCli(["node", "list", "--label", "zone=a", "--online", "--json"], {
      env,
    });
    const json = JSON.parse(result.stdout) as { nodes: { nodeId: string }[] };
    expect(json.nodes.map((n) => n.nodeId)).toEqual(["n1"]);
  });

  it("shows and disables a node", async () => {
    fake.state.nodes = [node("n1")];
    const shown = await runCli(["node", "show", "n1"], { env, now: () => NOW });
    expect(shown.stdout).toMatch(/^Node: +n1$/m);
    const disabled = await runCli(["node", "disable", "n1", "--reason", "maintenance", "--yes"], {
      env,
    });
    expect(disabled).toEqual({ code: 0, stdout: "node n1 disabled\n", stderr: "" });
    expect(fake.state.nodes[0]?.enabled).toBe(false);
  });

  it("passes the server's message through for NOT_FOUND", async () => {
    const result = await runCli(["node", "show", "ghost"], { env });
    expect(result).toEqual({ code: 1, stdout: "", stderr: "agentctl: node ghost not found\n" });
  });

  it("explains how to authenticate when no token is given", async () => {
    const result = await runCli(["node", "list"], {
      env: { AGENTCTL_SERVER: fake.url, AGENT_CONTROL_DATA_DIR: "/nonexistent" },
    });
    expect(result).toEqual({
      code: 1,
      stdout: "",
      stderr:
        "agentctl: not authenticated: pass --token or set AGENTCTL_TOKEN (the operator token is in /nonexistent/admin-token)\n",
    });
  });

  it("names the missing role when a viewer token tries to disable a node", async () => {
    fake.state.nodes = [node("n1")];
    const result = await runCli(["node", "disable", "n1", "--token", "viewer-token", "--yes"], {
      env,
    });
    expect(result).toEqual({
      code: 1,
      stdout: "",
      stderr:
        "agentctl: permission denied: this token's role cannot disable nodes (the viewer role may only read)\n",
    });
  });

  it("says which server it could not reach", async () => {
    const result = await runCli(["node", "list", "--server", "http://127.0.0.1:9"], { env });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^agentctl: cannot reach Control at http:\/\/127\.0\.0\.1:9: .*ECONNREFUSED.*\n$/,
    );
  });
});
