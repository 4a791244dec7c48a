/**
 * Every `agentctl` command that docs/operator-guide.md and the demo print runs as printed,
 * against a real Control with simulated agents: typed into a real shell on a terminal (a
 * pseudo-terminal from `script`, the operator answering y where a command asks), with
 * `agentctl` and `npx agentctl` on the PATH. Only placeholders (`<id>`, `<alice>`, a made-up
 * plan id, a node name) are replaced by this fleet's own. Steps a reader does between the
 * printed commands (a second signing key, aborting a campaign before the next) are done out
 * of sight. A command added to the guide fails the test until it is run here too.
 */
import { spawn } from "node:child_process";
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runAgentctl } from "../../agent-sim/demo/agentctl.js";
import { lookAroundCommands } from "../../agent-sim/demo/look-around.js";
import { type Fleet, startFleet } from "../../agent-sim/index.js";
import { CampaignService } from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { NodeService } from "../../proto/gen/agentcontrol/admin/v1/node_pb.js";
import { PlanService } from "../../proto/gen/agentcontrol/admin/v1/rollout_pb.js";
import { startTestControl, type TestControl } from "../helpers/control.js";

const ROOT = resolve(import.meta.dirname, "..", "..");
const BIN = join(ROOT, "cli", "bin", "agentctl.js");

/**
 * The agentctl commands of the guide's code blocks, as one line each: a line ending in `\`
 * joined with the next, runs of spaces made one, a trailing `# comment` left out.
 */
function guideCommands(markdown: string): string[] {
  const commands: string[] = [];
  let inBlock = false;
  let pending = "";
  for (const raw of markdown.split("\n")) {
    if (raw.trimStart().startsWith("```")) {
      inBlock = !inBlock;
      pending = "";
      continue;
    }
    if (!inBlock) continue;
    const line = pending === "" ? raw.trim() : `${pending} ${raw.trim()}`;
    if (line.endsWith("\\")) {
      pending = line.slice(0, -1).trim();
      continue;
    }
    pending = "";
    if (/^(npx )?agentctl /.test(line)) commands.push(normalize(line));
  }
  return commands;
}

function normalize(line: string): string {
  return line
    .replace(/\s+#\s.*$/, "")
    .replace(/\s+/g, " ")
    .trim();
}

/** One command's exit code and what it printed on the terminal. */
interface Typed {
  readonly code: number;
  readonly output: string;
}

describe("every agentctl command the operator guide and the demo print", {
  timeout: 400_000,
}, () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  it("runs as printed against a real Control", async () => {
    const printed = guideCommands(await readFile(join(ROOT, "docs", "operator-guide.md"), "utf8"));
    expect(printed.length).toBeGreaterThan(20);
    const ran = new Set<string>();

    const work = await mkdtemp(join(tmpdir(), "agent-control-guide-"));
    cleanups.push(() => rm(work, { recursive: true, force: true }));
    const bin = join(work, ".bin");
    await mkdir(bin);
    await writeFile(join(bin, "agentctl"), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
    await writeFile(
      join(bin, "npx"),
      `#!/bin/sh\n[ "$1" = agentctl ] || { echo "npx: only agentctl here" >&2; exit 127; }\nshift\nexec agentctl "$@"\n`,
    );
    await Promise.all(["agentctl", "npx"].map((f) => chmod(join(bin, f), 0o755)));
    let env: Record<string, string> = {
      PATH: `${bin}:/usr/bin:/bin`,
      HOME: work,
      SHELL: "/bin/bash",
      TERM: "dumb",
      NO_COLOR: "1",
    };

    /** Types `line` into bash on a terminal, answering y to a question; resolves at its exit. */
    const type = (line: string): Promise<Typed> =>
      new Promise((resolveTyped) => {
        const child = spawn("script", ["-qefc", line, "/dev/null"], { cwd: work, env });
        let output = "";
        child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
          output += chunk;
        });
        child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
          output += chunk;
        });
        child.stdin.write("y\n");
        const timer = setTimeout(() => child.kill("SIGKILL"), 120_000);
        child.once("close", (code) => {
          clearTimeout(timer);
          child.stdin.destroy();
          resolveTyped({ code: code ?? 1, output: output.replace(/\r/g, "") });
        });
      });

    /** Runs the printed `command` (it must be in the guide), placeholders replaced by `subs`. */
    const guide = async (command: string, subs: Record<string, string> = {}): Promise<Typed> => {
      expect(printed, `the guide prints ${command}`).toContain(command);
      ran.add(command);
      let line = command;
      for (const [from, to] of Object.entries(subs)) line = line.split(from).join(to);
      const typed = await type(line);
      expect(typed.code, `${line}\n${typed.output}`).toBe(0);
      return typed;
    };
    /** A step of the reader's own, not printed: agentctl without a terminal. */
    const quietly = async (args: string[]): Promise<string> => {
      const result = await runAgentctl(args, { env, cwd: work, timeoutMs: 60_000 });
      expect(result.code, `agentctl ${args.join(" ")}: ${result.stderr}`).toBe(0);
      return result.stdout;
    };

    // Signing a release happens offline, before Control trusts the keys.
    const alice = (await guide("npx agentctl release keygen --out alice.key")).output.match(
      /ed25519:\S+/,
    )?.[0];
    expect(alice).toBeDefined();
    const bob = (
      JSON.parse(await quietly(["release", "keygen", "--out", "bob.key", "--json"])) as {
        pin: string;
      }
    ).pin;
    await mkdir(join(work, "dist"));
    await writeFile(join(work, "dist", "agent-linux-amd64"), "simulated agent binary");
    await guide(
      "npx agentctl release manifest --version 1.4.0 --sequence 14 --artifact linux-amd64=dist/agent-linux-amd64 --expires 720h --out manifest.json",
    );
    await guide(
      "npx agentctl release manifest --version 1.4.0 --sequence 14 --artifact linux-amd64=dist/agent-linux-amd64 --url-base https://artifacts.example/agent --out mirror-manifest.json",
    );
    expect(await readFile(join(work, "mirror-manifest.json"), "utf8")).toContain(
      '"url": "https://artifacts.example/agent/agent-linux-amd64"',
    );
    await guide("npx agentctl release sign --key alice.key --in manifest.json --out release.json");
    await guide("npx agentctl release sign --key bob.key --in release.json --out release.json");
    await guide(
      "npx agentctl release verify --pin <alice> --pin <bob> --threshold 2 release.json",
      {
        "<alice>": alice ?? "",
        "<bob>": bob,
      },
    );

    const pins = [alice ?? "", bob];
    const tc: TestControl = await startTestControl({
      config: {
        release: { pins, threshold: 2 },
        policy: { minBatchDurationSeconds: 0 },
        worker: { intervalMs: 100 },
        timeouts: { heartbeatSeconds: 0.2, reconnectSeconds: 30, configGraceSeconds: 0 },
      },
    });
    cleanups.push(() => tc.stop());
    env = { ...env, AGENTCTL_SERVER: tc.adminUrl, AGENTCTL_TOKEN: tc.operatorToken };
    const campaigns = tc.client(CampaignService);
    const joinToken = await tc.joinToken();
    const fleet = (options: Partial<Parameters<typeof startFleet>[0]> & { count: number }) =>
      startFleet({
        server: tc.agentAddress,
        joinToken,
        pins,
        threshold: 2,
        restartMs: [1500, 2500],
        ...options,
      });
    const sizes = [6, 1, 1];
    const fleets: Fleet[] = [
      await fleet({ count: 6, idPrefix: "web", labels: { pool: "prod" } }),
      await fleet({
        count: 1,
        idPrefix: "legacy",
        labels: { pool: "legacy" },
        capabilities: ["config.v1"],
      }),
      await fleet({ count: 1, idPrefix: "spare", labels: { pool: "spare" } }),
    ];
    cleanups.push(async () => {
      await Promise.all(fleets.map((f) => f.stop()));
    });
    for (const [i, f] of fleets.entries()) {
      await f.waitUntil((x) => x.welcomedCount() === sizes[i], 20_000, "the fleet online");
    }

    await guide("npx agentctl release register release.json --artifacts dist/");
    await quietly([
      "release",
      "manifest",
      "--version",
      "2.4.0",
      "--sequence",
      "24",
      "--artifact",
      "linux-amd64=dist/agent-linux-amd64",
      "--expires",
      "720h",
      "--out",
      "m24.json",
    ]);
    await quietly([
      "release",
      "sign",
      "--key",
      "alice.key",
      "--in",
      "m24.json",
      "--out",
      "r24.json",
    ]);
    await quietly(["release", "sign", "--key", "bob.key", "--in", "r24.json", "--out", "r24.json"]);
    await quietly(["release", "register", "r24.json", "--artifacts", "dist/"]);

    // The release channel as a TUF repository: the reader's keys and `tuf init` out of sight.
    const keygen = async (file: string) =>
      (JSON.parse(await quietly(["release", "keygen", "--out", file, "--json"])) as { pin: string })
        .pin;
    const rootPin = await keygen("alice-root.key");
    const targetsPin = await keygen("alice-targets.key");
    const snapshotPin = await keygen("snapshot.key");
    const timestampPin = await keygen("timestamp.key");
    const newTargetsPin = await keygen("carol-targets.key");
    await mkdir(join(work, "tuf"));
    await quietly([
      "tuf",
      "init",
      "--repo",
      "tuf",
      "--root-key",
      rootPin,
      "--targets-key",
      targetsPin,
      "--snapshot-key",
      snapshotPin,
      "--timestamp-key",
      timestampPin,
    ]);
    await quietly(["tuf", "sign", "--repo", "tuf", "--role", "root", "--key", "alice-root.key"]);
    await guide(
      "npx agentctl tuf add-target --repo tuf --version 1.4.0 --sequence 14 --artifact linux-amd64=dist/agent-linux-amd64",
    );
    await guide("npx agentctl tuf sign --repo tuf --role targets --key alice-targets.key");
    await guide("npx agentctl tuf rotate-root --repo tuf --targets-key <new targets pin>", {
      "<new targets pin>": newTargetsPin,
    });
    await guide("npx agentctl tuf sign --repo tuf --role root --key alice-root.key");

    // Join tokens and nodes.
    await guide('npx agentctl token create --ttl 24h --description "rack 12"');
    await guide("npx agentctl token list");
    const tokens = JSON.parse(await quietly(["token", "list", "--json"])) as {
      tokens: { id: string; description: string }[];
    };
    const rack = tokens.tokens.find((t) => t.description === "rack 12")?.id ?? "";
    await guide("npx agentctl token revoke <id>", { "<id>": rack });
    const reset = await guide('npx agentctl node reset web-17 --reason "disk replaced"', {
      "web-17": "spare-00001",
    });
    expect(reset.output).toMatch(/Reset node spare-00001 .*\? \[y\/N\]/);
    // The reset node's stream stays open; it is kept out of the campaigns that follow.
    await tc.client(NodeService).disableNode({ nodeId: "spare-00001", reason: "reset" });
    await guide(
      "npx agentctl token create --ttl 24h --max-uses 40 --label pool=web --label rack=12",
    );
    await guide("npx agentctl node label web-17 canary=true", { "web-17": "spare-00001" });
    await guide("npx agentctl node label web-17 canary-", { "web-17": "spare-00001" });
    const revoked = await guide(
      'npx agentctl node revoke web-17 --reason "host compromised" --yes',
      {
        "web-17": "spare-00001",
      },
    );
    expect(revoked.output).toContain("node spare-00001 revoked");
    await guide("npx agentctl token create --ttl 1h --node web-17 --node web-18");
    await guide("npx agentctl token create --ttl 1h --allow-reenroll");
    const online = await guide("npx agentctl node list --online");
    expect(online.output).toContain("web-00001");
    await guide("npx agentctl node show <id>", { "<id>": "web-00001" });
    // The trust section's look at a node (none is frozen here: the columns are there).
    const listed = await guide("npx agentctl node list");
    expect(listed.output).toContain("web-00001");
    const shown = await guide("npx agentctl node show web-17", { "web-17": "web-00001" });
    expect(shown.output).toContain("web-00001");

    // Campaigns. The guide's variants start on the fleet one after another; before the
    // next, the reader aborts the last one (rolling its batch back) and waits for its end.
    const newest = async () => (await campaigns.listCampaigns({})).campaigns[0]?.id ?? "";
    const abortAndWait = async (id: string) => {
      await campaigns.abortCampaign({ id, rollback: true, reason: "next example" });
      for (let i = 0; i < 600; i++) {
        const { campaign } = await campaigns.getCampaign({ id, summaryOnly: true });
        if (campaign?.finishedAt !== undefined) return;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`campaign ${id} did not finish after its abort`);
    };
    await guide("npx agentctl campaign plan --version 1.4.0");
    const windowed = await guide(
      'agentctl campaign start --version 1.4.0 --window "Mon-Fri 02:00-04:00 Europe/Berlin" --window "Sat,Sun 01:00-06:00 Europe/Berlin"',
    );
    expect(windowed.output).toMatch(/Start upgrading \d+ node\(s\) to 1\.4\.0\? \[y\/N\]/);
    const windowedId = await newest();
    await abortAndWait(windowedId);
    await guide(
      "agentctl campaign start --version 1.4.0 --ramp 10/min×2 --ramp-max 200/min --ramp-step 30m",
    );
    await abortAndWait(await newest());
    await guide(
      "agentctl campaign start --version 1.4.0 --gate 'prometheus http://prometheus:9090 sum(rate(http_errors_total[5m])) / sum(rate(http_requests_total[5m])) < 0.01' --gate 'webhook https://checks.example/agent-rollout' --gate-grace 2m",
    );
    await abortAndWait(await newest());

    await guide("npx agentctl campaign start --version 1.4.0 --progress-deadline 45m --yes");
    await abortAndWait(await newest());

    await guide(
      "agentctl campaign start --version 1.4.0 --batches 5:30m,25:30m,50:30m,100:30m --threshold 5 --max-failures 20 --min-canaries 3",
    );
    await abortAndWait(await newest());

    await guide("agentctl campaign start --version 1.4.0 --max-downloads 200");
    await abortAndWait(await newest());

    await guide('npx agentctl campaign start --version 1.4.0 --reason "CVE-2026-1234"');
    const cve = await newest();
    await guide("npx agentctl campaign watch <id>", { "<id>": cve });
    await guide("npx agentctl campaign show <id> -o wide", { "<id>": cve });
    const why = await guide("npx agentctl campaign why <id>", { "<id>": cve });
    expect(why.output).toContain("nothing: the campaign has ended completed");
    await guide("npx agentctl campaign list --phase running");
    await guide("npx agentctl audit list --campaign <id>", { "<id>": cve });
    const ui = await guide("npx agentctl ui");
    expect(ui.output).toContain("/ui/#token=");

    // Convergence and plans.
    await guide(
      "agentctl campaign start --version 2.4.0 --pool prod --batches 5:30m,25:30m,100:30m",
    );
    const prod = await newest();
    await abortAndWait(prod);
    await guide("agentctl desired list");
    await guide("agentctl campaign list");
    await guide(
      'agentctl plan start --version 2.4.0 --groups dev,staging,prod --wait 24h --batches 5:30m,25:30m,100:30m --threshold 2 --reason "spring release"',
    );
    const plan = (await tc.client(PlanService).listPlans({})).plans[0]?.id ?? "";
    expect(plan).not.toBe("");
    await guide("agentctl plan show p-20250301-101500-1a2b3c", {
      "p-20250301-101500-1a2b3c": plan,
    });
    await guide('agentctl plan abort p-20250301-101500-1a2b3c --reason "hold for the freeze"', {
      "p-20250301-101500-1a2b3c": plan,
    });

    const plans = await guide("agentctl plan list");
    expect(plans.output).toMatch(new RegExp(`${plan}\\s+aborted`));

    // Yanking the guide's release last: nothing after it targets 1.4.0.
    const yank = await guide(
      'agentctl release yank 1.4.0 --reason "corrupts the cache on ext4" --yes',
    );
    expect(yank.output).toContain("release 1.4.0 yanked");
    const onIt = await guide("agentctl node list --version 1.4.0");
    expect(onIt.output).toMatch(/1\.4\.0/);

    expect(printed.filter((c) => !ran.has(c))).toEqual([]);

    // The demo's closing commands, as a script would run them (no terminal): the completed
    // campaign is the one over prod that was aborted (its canceled nodes are retried).
    for (const { command } of lookAroundCommands(prod, windowedId)) {
      const typed = await new Promise<Typed>((resolveTyped) => {
        const child = spawn("/bin/bash", ["-c", command], {
          cwd: work,
          env,
          stdio: ["ignore", "pipe", "pipe"],
        });
        let output = "";
        child.stdout.setEncoding("utf8").on("data", (c: string) => {
          output += c;
        });
        child.stderr.setEncoding("utf8").on("data", (c: string) => {
          output += c;
        });
        child.once("close", (code) => resolveTyped({ code: code ?? 1, output }));
      });
      expect(typed.code, `${command}\n${typed.output}`).toBe(0);
    }
  });
});
