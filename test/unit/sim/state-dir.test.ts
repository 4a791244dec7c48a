import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startFleet } from "../../../agent-sim/index.js";
import { eventually, type Harness, phases, startHarness } from "./harness.js";
import { confirmOp, makeRelease, upgradeOp } from "./release-fixture.js";

const NODE = "sim-00001";
let h: Harness | undefined;
let dir: string | undefined;

afterEach(async () => {
  await h?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  h = undefined;
  dir = undefined;
});

describe("--state-dir", () => {
  it("keeps identity, token, versions, confirmed sequence and handled operations across simulator restarts", async () => {
    dir = await mkdtemp(join(tmpdir(), "agent-sim-state-"));
    h = await startHarness({ stateDir: dir, count: 2 });
    const { control, fleet } = h;
    await fleet.waitUntil((f) => f.welcomedCount() === 2);
    const release = await makeRelease(h.artifacts, h.key, "1.1.0", 2);
    control.send(NODE, upgradeOp("up-1", release));
    await eventually(() => control.sessionsOf(NODE).length === 2 && fleet.agent(NODE).welcomed);
    control.send(NODE, confirmOp("cf-1", "1.1.0", 2));
    await eventually(() => control.reports(NODE, "cf-1").length === 1);
    const bootId = fleet.agent(NODE).bootId;
    await fleet.stop();

    expect((await readdir(dir)).sort()).toEqual(["sim-00001.json", "sim-00002.json"]);
    const saved = JSON.parse(await readFile(join(dir, "sim-00001.json"), "utf8"));
    expect(saved).toMatchObject({
      nodeId: NODE,
      version: "1.1.0",
      previousVersion: "1.0.0",
      confirmedSequence: "2",
    });
    expect(saved.nodeToken).toBe(control.sessionsOf(NODE)[0]!.issuedToken);

    const again = await startFleet({
      server: control.address,
      joinToken: "join-secret",
      count: 2,
      stateDir: dir,
      pins: [h.key.pin],
      tickMs: 20,
    });
    try {
      await again.waitUntil((f) => f.welcomedCount() === 2);
      const hello = control.sessionsOf(NODE).at(-1)!;
      expect(hello.token).toBe(saved.nodeToken);
      expect(hello.issuedToken).toBeUndefined();
      expect(hello.hello).toMatchObject({
        agentVersion: "1.1.0",
        previousVersion: "1.0.0",
        confirmedSequence: 2n,
      });
      expect(hello.hello!.bootId).not.toBe(bootId);
      control.send(NODE, upgradeOp("up-1", release));
      await eventually(() => control.live(NODE)!.observed.length === 1);
      expect(phases(control.live(NODE)!.observed)).toEqual(["RESTARTING"]);
      expect(again.agent(NODE).applyCount("up-1")).toBe(0);
      expect(again.stats().duplicatesIgnored).toBe(1);
    } finally {
      await again.stop();
    }
  });
});
