/**
 * Downloads that resume, with the real Agent download code (`downloadAsNode`, its partial
 * file in a download area of its own) against Control's real downloads listener and against
 * a plain HTTP mirror, each behind a TCP proxy that closes every connection after 2 MiB of
 * answer (a poor link):
 * - a 20 MiB artifact completes with at most 1.1× its size crossing the proxy;
 * - a byte corrupted in a resumed piece fails the sha256 over the whole artifact, and the
 *   Agent starts over and succeeds;
 * - a download stopped between cuts (an Agent restart, a power cut) resumes from its kept
 *   file;
 * - a mirror whose file changed (another ETag) between cuts is downloaded anew from 0.
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_DOWNLOAD_POLICY } from "../../agent/core/download.js";
import { downloadAsNode } from "../../agent/core/node-download.js";
import {
  type CuttingProxy,
  type CuttingProxyOptions,
  startCuttingProxy,
} from "../../agent-sim/bench/cutting-proxy.js";
import { type StaticMirror, startStaticMirror } from "../../agent-sim/bench/static-mirror.js";
import { downloadPath } from "../../control/releases/downloads.js";
import { startTestControl, type TestControl } from "../helpers/control.js";
import { storeLargeArtifact } from "../helpers/large-artifact.js";
import { connectAgent } from "../helpers/raw-agent.js";

const MIB = 1024 * 1024;
const SIZE = 20 * MIB;
const CUT = 2 * MIB;

/** Where a download is served: an origin (`host:port`), its path, and the artifact's sha256. */
interface Origin {
  readonly name: string;
  readonly upstream: () => string;
  readonly path: () => string;
  readonly sha256: () => string;
  readonly nodeToken: () => string | undefined;
}

let tc: TestControl;
let mirror: StaticMirror;
let controlSha = "";
let token = "";
const MIRROR_BYTES = randomBytes(SIZE);
const MIRROR_SHA = createHash("sha256").update(MIRROR_BYTES).digest("hex");
const MIRROR_PATH = "/releases/9.0.0/linux-amd64";

beforeAll(async () => {
  tc = await startTestControl({
    config: { downloads: { addr: "127.0.0.1:0", requireAuth: true } },
  });
  controlSha = await storeLargeArtifact(tc, "9.0.0", SIZE, 90);
  const { stream, welcome } = await connectAgent(
    tc.agentAddress,
    await tc.joinToken(),
    "resume-node-1",
  );
  stream.close();
  await stream.ended;
  if (welcome.body.case !== "welcome") throw new Error("resume-node-1 was not welcomed");
  token = welcome.body.value.nodeToken;
  mirror = await startStaticMirror(new Map([[MIRROR_PATH, MIRROR_BYTES]]));
}, 120_000);

afterAll(async () => {
  await mirror?.close();
  await tc?.stop();
});

const ORIGINS: Origin[] = [
  {
    name: "Control's downloads listener",
    upstream: () => new URL(tc.control.downloadsUrl ?? "").host,
    path: () => downloadPath("9.0.0", "linux-amd64"),
    sha256: () => controlSha,
    nodeToken: () => token,
  },
  {
    name: "a plain HTTP mirror",
    upstream: () => new URL(mirror.url).host,
    path: () => MIRROR_PATH,
    sha256: () => MIRROR_SHA,
    nodeToken: () => undefined,
  },
];

let area = "";
let proxy: CuttingProxy | undefined;
beforeEach(async () => {
  area = await mkdtemp(join(tmpdir(), "agent-downloads-"));
});
afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
  await rm(area, { recursive: true, force: true });
});

async function through(
  origin: Origin,
  options: Partial<CuttingProxyOptions> = {},
): Promise<CuttingProxy> {
  proxy = await startCuttingProxy({ upstream: origin.upstream(), cutAfterBytes: CUT, ...options });
  return proxy;
}

/** The Agent's download of `origin`'s artifact through `via`, keeping its partial in `area`. */
function download(origin: Origin, via: CuttingProxy, signal = new AbortController().signal) {
  return downloadAsNode(
    { url: `${via.url}${origin.path()}`, size: SIZE, sha256: origin.sha256() },
    {
      trustedOrigins: [via.url],
      artifactOrigins: { origins: [via.url] },
      policy: DEFAULT_DOWNLOAD_POLICY,
      nodeToken: origin.nodeToken(),
      tls: undefined,
      partialDir: area,
    },
    signal,
  );
}

/** The `range` header of a recorded request head, or undefined. */
function rangeOf(request: string): string | undefined {
  return /^range: *(.*)$/im.exec(request)?.[1]?.trim();
}

/** Every request head the proxy saw, in order (a kept-alive connection carries several). */
function requestsOf(via: CuttingProxy): string[] {
  return via.connections.flatMap((c) => c.requests);
}

describe.each(ORIGINS)("a download from $name through a link cut every 2 MiB", (origin) => {
  it("completes 20 MiB with at most 1.1× its size transferred, resuming with Range", async () => {
    const via = await through(origin);
    const result = await download(origin, via);
    expect(result.ok ? result.artifact.sha256 : result.message).toBe(origin.sha256());
    expect(result.ok && result.artifact.bytes.byteLength).toBe(SIZE);
    expect(via.bytesForwarded() / SIZE).toBeLessThanOrEqual(1.1);
    expect(via.connections.length).toBeGreaterThanOrEqual(SIZE / CUT);
    const [first, ...resumed] = via.connections;
    expect(rangeOf(first?.requests[0] ?? "")).toBeUndefined();
    expect(resumed.map((c) => c.status)).toEqual(resumed.map(() => 206));
    const [, ...ranged] = requestsOf(via);
    for (const head of ranged) expect(rangeOf(head)).toMatch(/^bytes=[1-9]\d*-$/);
    // A verified artifact leaves nothing behind in the download area.
    expect(await readdir(area)).toEqual([]);
  });

  it("starts over when a resumed piece arrived corrupted, and succeeds", async () => {
    // The fourth connection's answer has a byte flipped 1 MiB in (well past its headers).
    const via = await through(origin, { corrupt: [{ connection: 3, offset: MIB }] });
    const result = await download(origin, via);
    expect(result.ok ? result.artifact.sha256 : result.message).toBe(origin.sha256());
    // Once the whole artifact was there and failed its sha256, a GET from 0 started it over.
    const [, ...later] = requestsOf(via);
    expect(later.filter((head) => rangeOf(head) === undefined)).toHaveLength(1);
    expect(via.bytesForwarded() / SIZE).toBeLessThanOrEqual(2.2);
  });

  it("resumes from its kept file after being stopped between cuts", async () => {
    const via = await through(origin);
    const stop = new AbortController();
    // Stopped as its fourth GET goes out, after three cuts: 6 MiB kept.
    via.onRequest((connection) => {
      if (connection === 3) stop.abort();
    });
    const stopped = await download(origin, via, stop.signal);
    expect(stopped).toMatchObject({ ok: false, code: "download_failed" });
    expect(await readdir(area)).toHaveLength(2);
    const before = requestsOf(via).length;
    // A new download of the same artifact (as after a restart) goes on where it stopped.
    const result = await download(origin, via);
    expect(result.ok ? result.artifact.sha256 : result.message).toBe(origin.sha256());
    expect(rangeOf(requestsOf(via)[before] ?? "")).toMatch(/^bytes=[1-9]\d*-$/);
    expect(via.bytesForwarded() / SIZE).toBeLessThanOrEqual(1.1);
  });
});

describe("a download from a mirror whose file changed between cuts", () => {
  it("is answered 200 to its If-Range and starts over from 0, then completes", async () => {
    const origin = ORIGINS[1] as Origin;
    const via = await through(origin);
    via.onCut((connection) => {
      // The same bytes uploaded again: a new ETag and Last-Modified, as object storage gives.
      if (connection === 1) mirror.put(MIRROR_PATH, Buffer.from(MIRROR_BYTES));
    });
    const result = await download(origin, via);
    expect(result.ok ? result.artifact.sha256 : result.message).toBe(MIRROR_SHA);
    const third = via.connections[2];
    expect(rangeOf(third?.requests[0] ?? "")).toMatch(/^bytes=\d+-$/);
    expect(third?.requests[0]).toMatch(/^if-range: *"/im);
    expect(third?.status).toBe(200);
    expect(via.bytesForwarded() / SIZE).toBeLessThanOrEqual(1.3);
  });
});
