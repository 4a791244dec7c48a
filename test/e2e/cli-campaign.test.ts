/**
 * `agentctl campaign …` end to end: a real Control, simulated agents that verify and apply
 * signed releases, and the real binary planning, starting and watching campaigns.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { agentctl } from "../helpers/agentctl.js";
import type { TestControl } from "../helpers/control.js";
import { BATCHES, type CliFleet, startCliFleet } from "./cli-fleet.js";

describe("agentctl campaign against a real Control", { timeout: 120_000 }, () => {
  let cli: CliFleet;
  let tc: TestControl;
  let env: Record<string, string>;

  beforeAll(async () => {
    cli = await startCliFleet("cmp", [
      ["1.1.0", 1],
      ["1.2.0", 2],
      ["1.3.0", 3],
    ]);
    ({ tc, env } = cli);
  });

  afterAll(async () => {
    await cli?.stop();
  });

  it("plans the batches without starting anything", async () => {
    const result = await agentctl(["campaign", "plan", "--version", "1.1.0", ...BATCHES], env);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Plan for agent 1\.1\.0: 6 node\(s\) in 2 batch\(es\)$/m);
    expect(result.stdout).toMatch(/^1 +50% +3 +0 +0s /m);
    expect(result.stdout).toMatch(/^2 +100% +3 +0 +0s /m);
    const listed = await agentctl(["campaign", "list", "--json"], env);
    expect((JSON.parse(listed.stdout) as { campaigns: unknown[] }).campaigns).toEqual([]);
  });

  it("refuses a viewer token that tries to start a campaign", async () => {
    const result = await agentctl(
      ["campaign", "start", "--version", "1.1.0", ...BATCHES, "--yes", "--token", tc.viewerToken],
      env,
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^agentctl: permission denied: this token's role cannot start campaigns/,
    );
  });

  it("starts a campaign, prints its id, and watch exits 0 once it completed", async () => {
    const started = await agentctl(
      ["campaign", "start", "--version", "1.1.0", ...BATCHES, "--reason", "e2e", "--yes"],
      env,
    );
    expect(started.code).toBe(0);
    const id = started.stdout.trim();
    expect(id).toMatch(/^\S+$/);
    expect(started.stderr).toContain(`campaign watch ${id}`);

    const watched = await agentctl(["campaign", "watch", id], env);
    expect(watched.stderr).toBe("");
    expect(watched.code).toBe(0);
    const lines = watched.stdout.trimEnd().split("\n");
    expect(lines.at(-1)).toMatch(new RegExp(`campaign ${id}  completed  batch 2/2  succeeded=6`));
    // A line per state change and at most one a second while only counts move, not one per
    // node change (6 nodes, 4 changes each): campaign-watch-progress.test.ts times them.
    expect(lines.length).toBeLessThan(6 * 4);

    const events = await agentctl(["campaign", "watch", id, "--events"], env);
    expect(events.code).toBe(0);
    expect(events.stdout).toMatch(/ {2}node cmp-00001 {2}batch \d {2}waiting → succeeded {2}/);
    expect(events.stdout.match(/ {2}node cmp-\d{5} /g)).toHaveLength(6);

    const shown = await agentctl(["campaign", "show", id], env);
    expect(shown.stdout).toMatch(/^Phase: +completed$/m);
    expect(shown.stdout).not.toMatch(/^cmp-00001 /m);
    expect(shown.stdout).toContain(`Every node: agentctl campaign show ${id} --nodes\n`);
    const rows = await agentctl(["campaign", "show", id, "--nodes"], env);
    expect(rows.stdout).toMatch(/^cmp-00001 +\d +succeeded +1\.1\.0 /m);
    expect(rows.stdout.match(/^cmp-\d{5} /gm)).toHaveLength(6);

    const listed = await agentctl(["campaign", "list", "--phase", "completed"], env);
    expect(listed.stdout).toMatch(new RegExp(`^${id} +completed +1\\.1\\.0 +2/2 +6 +6 +0 `, "m"));

    const audit = await agentctl(["audit", "list", "--campaign", id, "--json"], env);
    const actions = (JSON.parse(audit.stdout) as { events: { action: string }[] }).events.map(
      (e) => e.action,
    );
    expect(actions).toContain("start");
  });

  it("prints in --json and -o yaml the words its tables print, for the same campaign", async () => {
    const table = await agentctl(["campaign", "list"], env);
    const json = JSON.parse((await agentctl(["campaign", "list", "--json"], env)).stdout) as {
      campaigns: {
        id: string;
        phase: string;
        currentBatch: number;
        batches: unknown[];
        spec: { version: string };
        nodeCount: number;
      }[];
    };
    expect(json.campaigns.length).toBeGreaterThan(0);
    for (const c of json.campaigns) {
      const row = table.stdout.split("\n").find((l) => l.startsWith(`${c.id} `));
      const [id, phase, version, batch, nodes] = (row ?? "").split(/ {2,}/);
      expect({ id, phase, version, batch, nodes }).toEqual({
        id: c.id,
        phase: c.phase,
        version: c.spec.version,
        batch: `${c.currentBatch}/${c.batches.length}`,
        nodes: String(c.nodeCount),
      });
    }
    const id = json.campaigns.at(-1)?.id ?? "";
    const nodeRows = (await agentctl(["campaign", "show", id, "--nodes"], env)).stdout;
    const shown = JSON.parse(
      (await agentctl(["campaign", "show", id, "--nodes", "--json"], env)).stdout,
    ) as { nodes: { nodeId: string; batch: number; state: string; version: string }[] };
    expect(shown.nodes).toHaveLength(6);
    for (const n of shown.nodes) {
      const row = nodeRows.split("\n").find((l) => l.startsWith(`${n.nodeId} `)) ?? "";
      const [nodeId, batch, state, version] = row.split(/ {2,}/);
      expect({ nodeId, batch, state, version }).toEqual({
        nodeId: n.nodeId,
        batch: String(n.batch),
        state: n.state,
        version: n.version,
      });
    }
    const yaml = await agentctl(["campaign", "show", id, "-o", "yaml"], env);
    expect(yaml.stdout).toMatch(/^ {2}phase: completed$/m);
    expect(yaml.stdout).toMatch(/^ {4}version: 1\.1\.0$/m);
  });

  it("lets no enum's protobuf name out of any command's --json", async () => {
    const id = (
      JSON.parse((await agentctl(["campaign", "list", "--json"], env)).stdout) as {
        campaigns: { id: string }[];
      }
    ).campaigns[0]?.id;
    expect(id).toBeDefined();
    // Every command writes JSON through one function (messageJson), which table-json.test.ts
    // checks over every message of the admin API; these are the ones with the most enums.
    const commands = [
      ["campaign", "show", id ?? "", "--nodes"],
      ["campaign", "why", id ?? ""],
      ["node", "show", "cmp-00001"],
      ["release", "show", "1.1.0"],
      ["audit", "list"],
    ];
    const leaks: string[] = [];
    const walk = (where: string, value: unknown): void => {
      if (typeof value === "string" && /^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$/.test(value))
        leaks.push(`${where}: ${value}`);
      else if (Array.isArray(value)) for (const v of value) walk(where, v);
      else if (value !== null && typeof value === "object")
        for (const [k, v] of Object.entries(value)) walk(`${where} ${k}`, v);
    };
    for (const command of commands) {
      const result = await agentctl([...command, "--json"], env);
      expect(result.stderr, command.join(" ")).toBe("");
      walk(command.join(" "), JSON.parse(result.stdout));
    }
    expect(leaks).toEqual([]);
  });

  it("sets a desired version again from what desired list -o yaml printed", async () => {
    const listed = parse((await agentctl(["desired", "list", "-o", "yaml"], env)).stdout) as {
      desiredVersions: { id: string; targetVersion: string }[];
    };
    const first = listed.desiredVersions[0];
    expect(first?.targetVersion).toBe("1.1.0");
    const dir = await mkdtemp(join(tmpdir(), "cli-desired-file-"));
    try {
      await writeFile(join(dir, "desired.yaml"), stringify(first));
      const set = await agentctl(["desired", "set", "-f", join(dir, "desired.yaml"), "--yes"], env);
      expect(set.stderr).toBe("");
      expect(set.stdout).toMatch(new RegExp(`^desired version ${first?.id} set: .* → 1\\.1\\.0 `));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  let rolledBack = "";

  it("watch exits 3 with the stop reason when a batch fails and is rolled back", async () => {
    const started = await agentctl(
      ["campaign", "start", "--version", "1.2.0", ...BATCHES, "--threshold", "0", "--yes"],
      env,
    );
    expect(started.code).toBe(0);
    const id = started.stdout.trim();
    const watched = await agentctl(["campaign", "watch", id], env);
    expect(watched.code).toBe(3);
    expect(watched.stderr).toMatch(
      new RegExp(`^agentctl: campaign ${id} ended rolled_back: batch_failed.*\\n$`),
    );
    rolledBack = id;
  });

  it("pauses, resumes and aborts a running campaign, each recorded in the audit log", async () => {
    const started = await agentctl(
      ["campaign", "start", "--version", "1.3.0", "--batches", "50:10m,100:10m", "--yes"],
      env,
    );
    expect(started.code).toBe(0);
    const id = started.stdout.trim();
    const paused = await agentctl(
      ["campaign", "pause", id, "--reason", "look first", "--yes"],
      env,
    );
    expect(paused).toEqual({
      code: 0,
      stdout: `campaign ${id} paused; phase paused\n`,
      stderr: "",
    });
    const resumed = await agentctl(["campaign", "resume", id, "--yes"], env);
    expect(resumed).toEqual({
      code: 0,
      stdout: `campaign ${id} resumed; phase running\n`,
      stderr: "",
    });
    const aborted = await agentctl(["campaign", "abort", id, "--json", "--yes"], env);
    expect(aborted.code).toBe(0);
    expect((JSON.parse(aborted.stdout) as { campaign: { phase: string } }).campaign.phase).toBe(
      "aborted",
    );
    const again = await agentctl(["campaign", "pause", id, "--yes"], env);
    expect(again.code).toBe(1);
    expect(again.stderr.split("\n")).toHaveLength(2);
    const audit = await agentctl(["audit", "list", "--campaign", id, "--json"], env);
    const actions = (JSON.parse(audit.stdout) as { events: { action: string }[] }).events.map(
      (e) => e.action,
    );
    expect(actions).toEqual(expect.arrayContaining(["start", "pause", "resume", "abort"]));
  });

  it("starts from what campaign show -o yaml printed: the same spec, as a new campaign", async () => {
    expect(rolledBack).not.toBe("");
    const dir = await mkdtemp(join(tmpdir(), "cli-campaign-file-"));
    try {
      const shown = await agentctl(["campaign", "show", rolledBack, "-o", "yaml"], env);
      expect(shown.code).toBe(0);
      await writeFile(join(dir, "campaign.yaml"), shown.stdout);
      const started = await agentctl(
        ["campaign", "start", "-f", join(dir, "campaign.yaml"), "--yes"],
        env,
      );
      expect(started.stderr).toContain("follow it with");
      const id = started.stdout.trim();
      await agentctl(["campaign", "abort", id, "--yes"], env);
      const spec = async (c: string) =>
        (
          JSON.parse((await agentctl(["campaign", "show", c, "--json"], env)).stdout) as {
            campaign: { spec: unknown };
          }
        ).campaign.spec;
      expect(await spec(id)).toEqual(await spec(rolledBack));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("retries a rolled-back campaign as a new one that names its origin", async () => {
    expect(rolledBack).not.toBe("");
    const retried = await agentctl(
      ["campaign", "retry", rolledBack, "--exclude-node", "cmp-00001", "--yes"],
      env,
    );
    expect(retried.stderr).toContain(`(retry of ${rolledBack})`);
    expect(retried.code).toBe(0);
    const id = retried.stdout.trim();
    const shown = await agentctl(["campaign", "show", id, "--nodes", "--json"], env);
    const json = JSON.parse(shown.stdout) as {
      campaign: { retryOf: string };
      nodes: { nodeId: string }[];
    };
    expect(json.campaign.retryOf).toBe(rolledBack);
    expect(json.nodes.length).toBeGreaterThan(0);
    expect(json.nodes.map((n) => n.nodeId)).not.toContain("cmp-00001");
    await agentctl(["campaign", "abort", id], env);
  });
});
