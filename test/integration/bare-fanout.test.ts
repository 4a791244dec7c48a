/**
 * The fan-out's baseline (`agent-sim/bench/bare-fanout.ts`): the bare grpc-js server, started
 * with the benchmark release's offer, writes it to some of its streams at once, and the real
 * simulated agents (their own process, the release's pin) take it as they take Control's: each
 * offered agent verifies the signed envelope, upgrades, restarts and comes back on the target.
 * An offer they refused (a bad encoding, a broken signature) would leave them on their version.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { measureBareFanout, offerFile, offerMessage } from "../../agent-sim/bench/bare-fanout.js";
import { prepareRelease } from "../../agent-sim/bench/campaign-release.js";
import { type SimProcess, startSimProcess, waitWelcomed } from "../../agent-sim/bench/processes.js";
import { type BareServer, bareTarget } from "../../agent-sim/bench/target.js";

const AGENTS = 40;
const OFFERS = 10;

describe("the bare server's fan-out", () => {
  let dir: string | undefined;
  let bare: BareServer | undefined;
  let sim: SimProcess | undefined;
  afterEach(async () => {
    await sim?.stop();
    await bare?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
    sim = undefined;
    bare = undefined;
    dir = undefined;
  });

  it("offers the signed release to the asked number of agents, who upgrade and come back", async () => {
    dir = await mkdtemp(join(tmpdir(), "bare-fanout-"));
    const release = await prepareRelease(dir, "2.0.0");
    await writeFile(offerFile(dir), await offerMessage(release));
    bare = await bareTarget(dir, 10_000, offerFile(dir));
    sim = await startSimProcess(
      {
        server: bare.server,
        joinToken: bare.joinToken,
        count: AGENTS,
        seed: 1,
        idPrefix: "bf",
        connectRate: 200,
        download: false,
        restartMs: [0, 0],
        pins: [release.pin],
      },
      join(dir, "sim.log"),
      true,
    );
    await waitWelcomed([sim], AGENTS, 60_000, `${AGENTS} streams on the bare server`);

    const fanout = await measureBareFanout(bare, [sim], OFFERS);

    expect(fanout.sent).toBe(OFFERS);
    expect(fanout.firstMs).toBeGreaterThanOrEqual(0);
    expect(fanout.lastMs).toBeGreaterThanOrEqual(fanout.firstMs);
    const upgraded = await sim.waitFor(
      (c) => c.welcomed === AGENTS && (c.versions["2.0.0"] ?? 0) === OFFERS,
      30_000,
      `${OFFERS} agents back on 2.0.0`,
    );
    expect(upgraded.versions["2.0.0"]).toBe(OFFERS);
    // Each offered agent took the offer once: no second mark, no further upgrade.
    expect((await sim.marks()).offers).toHaveLength(0);
  }, 120_000);

  it("refuses a fan-out when it was started without an offer", async () => {
    dir = await mkdtemp(join(tmpdir(), "bare-fanout-"));
    bare = await bareTarget(dir, 10_000);
    await expect(bare.fanOut(1)).rejects.toThrow(/without an offer/);
  });
});
