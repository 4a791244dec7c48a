/**
 * A real Agent on this machine, end to end: installed at 1.0.0 from an artifact built by
 * `agent:build`, it enrolls with a real Control; a campaign to 1.1.0 switches its install
 * directory and the process that answers is 1.1.0, confirmed; a campaign to 1.2.0 whose
 * correctly signed artifact is garbage crashes at start, the supervisor reverts to 1.1.0 by
 * itself, and the campaign records the node failed and rolls the batch back; a campaign to
 * 1.3.0 aborted with rollback makes the Agent reinstate 1.1.0.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { readlink } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CampaignPhase, NodeState } from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import {
  type CampaignFixture,
  isDone,
  quickSpec,
  waitForCampaign,
} from "../integration/campaign-fixture.js";
import { heldSpec, registerAgentRelease, waitOnline } from "./agent-campaign-fixture.js";
import { eventually, type RunningAgent } from "./agent-fixture.js";
import { type AgentWorld, startAgentWorld } from "./agent-world.js";

const NODE = "real-node-1";
const DEADLINE_MS = 4_000;

describe("a real Agent upgraded by campaigns", () => {
  let world: AgentWorld;
  let fx: CampaignFixture;
  let dir = "";
  let agent: RunningAgent | undefined;

  beforeAll(async () => {
    world = await startAgentWorld({ prefix: "real-agent-", versions: ["1.0.0", "1.1.0", "1.3.0"] });
    ({ fx, dir } = world);
    const artifacts = new Map<string, Uint8Array>([
      ["1.1.0", world.bytes("1.1.0")],
      ["1.2.0", new TextEncoder().encode("this is not JavaScript }{\n")],
      ["1.3.0", world.bytes("1.3.0")],
    ]);
    for (const version of ["1.1.0", "1.2.0", "1.3.0"]) {
      const sequence = Number(version.split(".")[1]) + 10;
      await registerAgentRelease(fx, version, sequence, artifacts.get(version) ?? new Uint8Array());
    }
  }, 120_000);

  afterAll(async () => {
    await world?.stop();
  });

  const install = () => world.install();
  const readStatus = () => world.status();
  const onVersion = (version: string) => waitOnline(fx.tc, NODE, version);

  it.each([
    [
      ["run", "--install-dir", "DIR", "--server", "nowhere", "--pins", "PIN"],
      /--server must be HOST:PORT/,
    ],
    [["run", "--install-dir", "DIR", "--server", "127.0.0.1:7443"], /--pins is required/],
    [["status"], /--install-dir DIR is required/],
    [
      ["run", "--install-dir", "DIR", "--server", "127.0.0.1:7443", "--pins", "PIN"],
      /--join-token is required until the node has enrolled/,
    ],
  ])(
    "the artifact refuses %j with exit 2, one line, and installs nothing",
    async (argv, message) => {
      const bad = join(dir, "bad-flags");
      const args = argv.map((a) => (a === "DIR" ? bad : a === "PIN" ? fx.key.pin : a));
      const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
        execFile(process.execPath, [join(dir, "agent-1.0.0.mjs"), ...args], (error, _out, stderr) =>
          resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stderr }),
        );
      });
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(message);
      expect(result.stderr.trimEnd().split("\n")).toHaveLength(1);
      expect(existsSync(bad)).toBe(false);
    },
  );

  it("installs itself at 1.0.0 and enrolls", async () => {
    agent = await world.start({ nodeId: NODE, startDeadlineMs: DEADLINE_MS });
    await onVersion("1.0.0");
    const status = await readStatus();
    expect(status).toMatchObject({ current: "1.0.0", previous: null, nodeId: NODE, pending: null });
    expect(await readlink(join(install(), "current"))).toBe(join("versions", "1.0.0"));
  }, 60_000);

  it("upgrades to 1.1.0: the install directory switches, 1.1.0 answers, and it is confirmed", async () => {
    const started = await fx.campaigns.startCampaign({ spec: quickSpec("1.1.0", [5, 100]) });
    const id = started.campaign?.id ?? "";
    const done = await waitForCampaign(fx.campaigns, id, isDone, 60_000);
    expect(CampaignPhase[done.phase]).toBe("COMPLETED");
    const n = await onVersion("1.1.0");
    expect(n.previousVersion).toBe("1.0.0");
    const status = await eventually(async () => {
      const s = await readStatus();
      return s.confirmedSequence === "11" ? s : undefined;
    }, "confirmed sequence 11");
    expect(status).toMatchObject({ current: "1.1.0", previous: null, pending: null });
    expect(status.installed).toEqual(["1.1.0"]);
  }, 90_000);

  it("reverts a signed but broken 1.2.0 by itself; the campaign fails the node and rolls back", async () => {
    const before = Date.now();
    const started = await fx.campaigns.startCampaign({ spec: quickSpec("1.2.0", [5, 100]) });
    const id = started.campaign?.id ?? "";
    const done = await waitForCampaign(fx.campaigns, id, isDone, 60_000);
    expect(CampaignPhase[done.phase]).toBe("ROLLED_BACK");
    const { nodes } = await fx.campaigns.getCampaign({ id });
    expect(nodes.map((n) => NodeState[n.state])).toEqual(["FAILED"]);
    await onVersion("1.1.0");
    expect(Date.now() - before).toBeLessThan(DEADLINE_MS + 30_000);
    const status = await readStatus();
    expect(status).toMatchObject({ current: "1.1.0", pending: null, confirmedSequence: "11" });
    expect(status.installed).not.toContain("1.2.0");
    expect(agent?.logs()).toMatch(/reverting to the previous version/);
  }, 90_000);

  it("reinstates 1.1.0 when a rollback operation follows an upgrade to 1.3.0", async () => {
    const started = await fx.campaigns.startCampaign({ spec: heldSpec("1.3.0") });
    const id = started.campaign?.id ?? "";
    await onVersion("1.3.0");
    expect((await readStatus()).previous).toBe("1.1.0");
    await fx.campaigns.abortCampaign({ id, rollback: true });
    const done = await waitForCampaign(fx.campaigns, id, isDone, 60_000);
    expect(CampaignPhase[done.phase]).toMatch(/ABORTED|ROLLED_BACK/);
    await onVersion("1.1.0");
    const status = await readStatus();
    expect(status).toMatchObject({ current: "1.1.0", previous: "1.3.0", pending: null });
  }, 90_000);
});
