/**
 * The fan-out's baseline: the same upgrade offer Control sends (the benchmark release's
 * envelope exactly as signed, with its linux-amd64 artifact), written by the bare server to a
 * quarter of the same simulated fleet at once. The agents handle it as they handle Control's
 * (verify, five reports, an instant restart, a new stream), so the time from the bare server's
 * first write to the last offer received is what the simulators and the machine cost a fan-out
 * of that size; Control's figure above it is what Control adds.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { create, toBinary } from "@bufbuild/protobuf";
import { ControlMessageSchema } from "../../proto/gen/agentcontrol/v1/agent_control_pb.js";
import type { BenchRelease } from "./campaign-release.js";
import { type SimProcess, sleep } from "./processes.js";
import type { SimMarks } from "./sim-runner.js";
import type { BareServer } from "./target.js";

/** The platform every simulated agent reports. */
const PLATFORM = "linux-amd64";

interface EnvelopeFile {
  readonly payloadType: string;
  readonly payload: string;
  readonly signatures: readonly { readonly keyid: string; readonly sig: string }[];
}

interface ManifestFile {
  readonly sequence: number;
  readonly artifacts: Readonly<Record<string, { readonly sha256: string; readonly size: number }>>;
}

/**
 * The encoded `ControlMessage { operation }` offering `release`, with one operation id for
 * every agent. An agent handles an id once, so a fleet takes one fan-out of it: a second one
 * would reach agents that already took it (the bench makes one per fleet).
 */
export async function offerMessage(release: BenchRelease): Promise<Uint8Array> {
  const envelope = JSON.parse(await readFile(release.envelope, "utf8")) as EnvelopeFile;
  const manifest = JSON.parse(
    Buffer.from(envelope.payload, "base64").toString("utf8"),
  ) as ManifestFile;
  const artifact = manifest.artifacts[PLATFORM];
  if (artifact === undefined) throw new Error(`the release has no ${PLATFORM} artifact`);
  return toBinary(
    ControlMessageSchema,
    create(ControlMessageSchema, {
      body: {
        case: "operation",
        value: {
          id: "bare-fanout",
          kind: {
            case: "agentUpgrade",
            value: {
              version: release.version,
              sequence: BigInt(manifest.sequence),
              artifact: {
                platform: PLATFORM,
                url: `http://127.0.0.1/artifacts/${release.version}/${PLATFORM}`,
                sha256: artifact.sha256,
                size: BigInt(artifact.size),
              },
              envelope: {
                payloadType: envelope.payloadType,
                payload: Buffer.from(envelope.payload, "base64"),
                signatures: envelope.signatures.map((s) => ({
                  keyid: s.keyid,
                  sig: Buffer.from(s.sig, "base64"),
                })),
              },
            },
          },
        },
      },
    }),
  );
}

/** Where the bare server reads its offer (`echo-server.ts --offer`). */
export function offerFile(dir: string): string {
  return join(dir, "bare-offer.bin");
}

/** What the bare server's fan-out showed. */
export interface BareFanout {
  /** Offers the bare server wrote. */
  readonly sent: number;
  /** From its first write to the last offer received (ms). */
  readonly lastMs: number;
  /** From its first write to the first offer received (ms). */
  readonly firstMs: number;
  /** Its own loop over the writes (ms). */
  readonly writeMs: number;
  /** The bare server's event-loop delay p99 (ms) from just before its writes to the last offer received. */
  readonly eldP99: number | undefined;
}

/**
 * Has `bare` offer `count` of its streams at once (`fanOut`) and waits, at most `timeoutMs`,
 * until the simulators (started with `instrument`) have received them all; the bare server's
 * event-loop delay is read over the same window, as Control's is over its fan-out. Then waits
 * (at most `timeoutMs` more, outside the window) until `count` agents are back on `version`:
 * a mark is taken when an offer arrives, before the agent verifies it, so an offer the agents
 * refused would otherwise pass as a (cheaper) baseline.
 * @throws when the bare server holds fewer streams, fewer offers arrive in time, or fewer
 *   agents took the offer.
 */
export async function measureBareFanout(
  bare: Pick<BareServer, "fanOut" | "memory" | "eventLoopDelay">,
  sims: readonly SimProcess[],
  count: number,
  version: string,
  timeoutMs = 60_000,
): Promise<BareFanout> {
  await Promise.all(sims.map((sim) => sim.marks()));
  // As Control's fan-out: memory after GC, then a fresh event-loop delay window without one.
  await bare.memory();
  await bare.eventLoopDelay();
  const wrote = await bare.fanOut(count);
  if (wrote.sent < count) throw new Error(`the bare server held ${wrote.sent} streams of ${count}`);
  const marks: SimMarks[] = [];
  const received = () => marks.reduce((n, m) => n + m.offers.length, 0);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    marks.push(...(await Promise.all(sims.map((sim) => sim.marks()))));
    if (received() >= count) break;
    if (Date.now() > deadline) throw new Error(`${received()} of ${count} bare offers received`);
    await sleep(50);
  }
  const eld = await bare.eventLoopDelay();
  const at = marks.flatMap((m) => m.offers.map(([, t]) => t)).sort((a, b) => a - b);
  const upgradedBy = Date.now() + timeoutMs;
  for (;;) {
    const counts = await Promise.all(sims.map((sim) => sim.counts()));
    const upgraded = counts.reduce((n, c) => n + (c.versions[version] ?? 0), 0);
    if (upgraded >= count) break;
    if (Date.now() > upgradedBy) {
      throw new Error(
        `${upgraded} of ${count} offered agents on ${version}: the offer was refused`,
      );
    }
    await sleep(250);
  }
  return {
    sent: wrote.sent,
    lastMs: (at[count - 1] as number) - wrote.at,
    firstMs: (at[0] as number) - wrote.at,
    writeMs: wrote.writeMs,
    eldP99: eld?.p99,
  };
}
