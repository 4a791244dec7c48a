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
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { afterEach, describe, expect, it } from "vitest";
import { measureBareFanout, offerFile, offerMessage } from "../../agent-sim/bench/bare-fanout.js";
import { prepareRelease } from "../../agent-sim/bench/campaign-release.js";
import { type SimProcess, startSimProcess, waitWelcomed } from "../../agent-sim/bench/processes.js";
import { type BareServer, bareTarget } from "../../agent-sim/bench/target.js";
import { ControlMessageSchema } from "../../proto/gen/agentcontrol/v1/agent_control_pb.js";

const AGENTS = 40;
const OFFERS = 10;

/** `AGENTS` simulated agents on `bare`, trusting `pin`, instrumented (logs in `logDir`), all welcomed. */
async function startFleet(bare: BareServer, pin: string, logDir: string): Promise<SimProcess> {
  const sim = await startSimProcess(
    {
      server: bare.server,
      joinToken: bare.joinToken,
      count: AGENTS,
      seed: 1,
      idPrefix: "bf",
      connectRate: 200,
      download: false,
      restartMs: [0, 0],
      pins: [pin],
    },
    join(logDir, "sim.log"),
    true,
  );
  await waitWelcomed([sim], AGENTS, 60_000, `${AGENTS} streams on the bare server`);
  return sim;
}

/** `offer` with the first byte of its first signature flipped: no agent accepts it. */
function brokenSignature(offer: Uint8Array): Uint8Array {
  const message = fromBinary(ControlMessageSchema, offer);
  if (message.body.case !== "operation" || message.body.value.kind.case !== "agentUpgrade") {
    throw new Error("the offer is not an agentUpgrade operation");
  }
  const signature = message.body.value.kind.value.envelope?.signatures[0];
  if (signature === undefined) throw new Error("the offer carries no signature");
  signature.sig[0] = (signature.sig[0] ?? 0) ^ 0xff;
  return toBinary(ControlMessageSchema, message);
}

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

  /**
   * A fresh release, a bare server started with its offer (passed through `tamper` when given)
   * and the fleet on it, all welcomed (each stopped after the test).
   */
  async function start(tamper?: (offer: Uint8Array) => Uint8Array) {
    dir = await mkdtemp(join(tmpdir(), "bare-fanout-"));
    const release = await prepareRelease(dir, "2.0.0");
    const offer = await offerMessage(release);
    await writeFile(offerFile(dir), tamper ? tamper(offer) : offer);
    const server = await bareTarget(dir, 10_000, offerFile(dir));
    bare = server;
    const fleet = await startFleet(server, release.pin, dir);
    sim = fleet;
    return { release, bare: server, sim: fleet };
  }

  it("offers the signed release to the asked number of agents, who upgrade and come back", async () => {
    const { release, bare, sim } = await start();

    const fanout = await measureBareFanout(bare, [sim], OFFERS, release.version);

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

  it("rejects a fan-out the agents refused (a broken signature): marks alone are no baseline", async () => {
    const { release, bare, sim } = await start(brokenSignature);

    await expect(measureBareFanout(bare, [sim], OFFERS, release.version, 5_000)).rejects.toThrow(
      /on 2\.0\.0/,
    );
    expect((await sim.counts()).versions["2.0.0"] ?? 0).toBe(0);
  }, 120_000);

  it("forgets streams that ended: after every agent dropped its stream, a fan-out reaches only live ones", async () => {
    const { bare, sim } = await start();
    await sim.drop();
    await sim.waitFor((c) => c.welcomes >= 2 * AGENTS && c.welcomed === AGENTS, 60_000, "back");

    expect((await bare.fanOut(10 * AGENTS)).sent).toBe(AGENTS);
  }, 120_000);

  it("refuses a fan-out when it was started without an offer", async () => {
    dir = await mkdtemp(join(tmpdir(), "bare-fanout-"));
    bare = await bareTarget(dir, 10_000);
    await expect(bare.fanOut(1)).rejects.toThrow(/without an offer/);
  });
});
