/**
 * The single-executable Agent on a host without Node.js, end to end: built by
 * `agent:build --executable` at 1.0.0 and started directly with a PATH that holds no
 * `node`, its supervisor installs the binary as the first version and enrolls with a real
 * Control; a campaign to the 1.1.0 executable switches the install directory and 1.1.0
 * answers, confirmed; a correctly signed 1.2.0 executable that crashes on start is reverted
 * by the supervisor by itself, and the campaign fails the node and rolls back.
 */
import { execFile } from "node:child_process";
import { constants } from "node:fs";
import { access, mkdir, readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hostPlatform } from "../../agent/cli-args.js";
import { writeSingleExecutable } from "../../agent/executable.js";
import { CampaignPhase, NodeState } from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import {
  type CampaignFixture,
  isDone,
  quickSpec,
  waitForCampaign,
} from "../integration/campaign-fixture.js";
import { registerAgentRelease, waitOnline } from "./agent-campaign-fixture.js";
import { eventually, type RunningAgent } from "./agent-fixture.js";
import { type AgentWorld, startAgentWorld } from "./agent-world.js";

const run = promisify(execFile);
const NODE = "sea-node-1";
const DEADLINE_MS = 8_000;
const CRASHES = `process.stderr.write("1.2.0 is broken\\n"); process.exit(3);`;

describe("the single-executable Agent on a host without Node.js", () => {
  let world: AgentWorld;
  let fx: CampaignFixture;
  let dir = "";
  let agent: RunningAgent | undefined;
  /** The whole environment of every Agent process: a PATH with no `node` on it. */
  let env: NodeJS.ProcessEnv = {};

  beforeAll(async () => {
    world = await startAgentWorld({
      prefix: "sea-agent-",
      versions: ["1.0.0", "1.1.0"],
      executable: true,
      prepare: async (d) => {
        await mkdir(join(d, "bin"));
        await writeSingleExecutable(new TextEncoder().encode(CRASHES), join(d, "agent-1.2.0"));
      },
    });
    ({ fx, dir } = world);
    env = { PATH: join(dir, "bin"), HOME: dir };
    await registerAgentRelease(fx, "1.1.0", 11, world.bytes("1.1.0"));
    await registerAgentRelease(fx, "1.2.0", 12, await readFile(join(dir, "agent-1.2.0")));
  }, 300_000);

  afterAll(async () => {
    await world?.stop();
  });

  const install = () => world.install();
  const status = () => world.status(undefined, env);

  it("is an executable that runs where no node is on the PATH", async () => {
    const found = await run("/bin/sh", ["-c", "command -v node"], { env }).then(
      () => true,
      () => false,
    );
    expect(found).toBe(false);
    const { stdout } = await run(join(dir, "agent-1.0.0"), ["--help"], { env });
    expect(stdout).toMatch(/^Usage:/);
    const mode = (await stat(join(dir, "agent-1.0.0"))).mode;
    expect(mode & 0o111).not.toBe(0);
  });

  it("agent:build refuses --executable for another platform with exit 2, one line, and writes nothing", async () => {
    const out = join(dir, "other-platform");
    const tsx = join(import.meta.dirname, "../../node_modules/.bin/tsx");
    const build = join(import.meta.dirname, "../../agent/build-main.ts");
    const platform = hostPlatform() === "linux-amd64" ? "darwin-arm64" : "linux-amd64";
    const result = await run(tsx, [
      build,
      "--version",
      "1.0.0",
      "--executable",
      "--platform",
      platform,
      "--out",
      out,
    ]).then(
      () => ({ code: 0, stderr: "" }),
      (error: { code?: number; stderr?: string }) => ({
        code: error.code,
        stderr: error.stderr ?? "",
      }),
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--executable builds for this host's platform only/);
    expect(result.stderr.trimEnd().split("\n")).toHaveLength(1);
    await expect(access(out)).rejects.toThrow();
  });

  it("installs its own binary at 1.0.0 and enrolls", async () => {
    agent = await world.start({ nodeId: NODE, startDeadlineMs: DEADLINE_MS, env });
    await waitOnline(fx.tc, NODE, "1.0.0");
    expect(await status()).toMatchObject({ current: "1.0.0", nodeId: NODE, pending: null });
    expect(await readdir(join(install(), "versions", "1.0.0"))).toEqual(["agent"]);
    await access(join(install(), "versions", "1.0.0", "agent"), constants.X_OK);
  }, 90_000);

  it("upgrades to the 1.1.0 executable: the install directory switches, 1.1.0 answers, confirmed", async () => {
    const started = await fx.campaigns.startCampaign({ spec: quickSpec("1.1.0", [5, 100]) });
    const id = started.campaign?.id ?? "";
    const done = await waitForCampaign(fx.campaigns, id, isDone, 120_000);
    expect(CampaignPhase[done.phase]).toBe("COMPLETED");
    const n = await waitOnline(fx.tc, NODE, "1.1.0");
    expect(n.previousVersion).toBe("1.0.0");
    const settled = await eventually(async () => {
      const s = await status();
      return s.confirmedSequence === "11" ? s : undefined;
    }, "confirmed sequence 11");
    expect(settled).toMatchObject({ current: "1.1.0", previous: null, pending: null });
    expect(settled.installed).toEqual(["1.1.0"]);
    expect(await readdir(join(install(), "versions", "1.1.0"))).toEqual(["agent"]);
    await access(join(install(), "versions", "1.1.0", "agent"), constants.X_OK);
  }, 150_000);

  it("reverts a signed 1.2.0 executable that crashes on start; the campaign fails the node and rolls back", async () => {
    const started = await fx.campaigns.startCampaign({ spec: quickSpec("1.2.0", [5, 100]) });
    const id = started.campaign?.id ?? "";
    const done = await waitForCampaign(fx.campaigns, id, isDone, 120_000);
    expect(CampaignPhase[done.phase]).toBe("ROLLED_BACK");
    const { nodes } = await fx.campaigns.getCampaign({ id });
    expect(nodes.map((n) => NodeState[n.state])).toEqual(["FAILED"]);
    await waitOnline(fx.tc, NODE, "1.1.0");
    const after = await status();
    expect(after).toMatchObject({ current: "1.1.0", pending: null, confirmedSequence: "11" });
    expect(after.installed).not.toContain("1.2.0");
    expect(agent?.logs()).toMatch(/1\.2\.0 exited \(code 3\) before Control welcomed it/);
  }, 150_000);
});
