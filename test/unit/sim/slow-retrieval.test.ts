import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { fetchArtifact } from "../../../agent/core/download.js";
import { eventually, type Harness, phases, startHarness } from "./harness.js";
import { ArtifactServer, confirmOp, makeRelease, upgradeOp } from "./release-fixture.js";

const NODE = "sim-00001";
let h: Harness | undefined;
let server: ArtifactServer | undefined;

afterEach(async () => {
  await h?.close();
  h = undefined;
  await server?.stop();
  server = undefined;
});

/** 1 KiB every 2 s: never stalls, never finishes in any useful time. */
const TRICKLE = { chunk: 1024, everyMs: 2000 } as const;

describe("slow retrieval: a download has a deadline and a minimum rate from its signed size", () => {
  it("fails download_too_slow when a server trickles 1 KiB every 2 s, long before the body ends", async () => {
    server = await new ArtifactServer().start();
    const body = new Uint8Array(randomBytes(64 * 1024));
    server.routes.set("/slow", { kind: "trickle", body, ...TRICKLE });
    const started = Date.now();
    const result = await fetchArtifact(
      `${server.base}/slow`,
      body.byteLength,
      { stallMs: 10_000, graceMs: 1000, minBytesPerSecond: 8192 },
      new AbortController().signal,
    );
    expect(result).toMatchObject({ ok: false, code: "download_too_slow" });
    expect(!result.ok && result.message).toMatch(/bytes\/s|deadline/);
    expect(Date.now() - started).toBeLessThan(4000);
  });

  it("still downloads an artifact that arrives above the minimum rate", async () => {
    server = await new ArtifactServer().start();
    const body = new Uint8Array(randomBytes(16 * 1024));
    server.routes.set("/ok", { kind: "trickle", body, chunk: 4096, everyMs: 50 });
    const result = await fetchArtifact(
      `${server.base}/ok`,
      body.byteLength,
      { stallMs: 10_000, graceMs: 1000, minBytesPerSecond: 8192 },
      new AbortController().signal,
    );
    expect(result.ok).toBe(true);
  });

  it("does not hold the next operation behind a trickling download", async () => {
    h = await startHarness({ downloadGraceMs: 500, downloadMinBytesPerSecond: 8192 });
    await h.fleet.waitUntil((f) => f.welcomedCount() === 1);
    const release = await makeRelease(h.artifacts, h.key, "1.1.0", 2);
    const artifact = release.artifacts["linux-amd64"]!;
    h.artifacts.routes.set(new URL(artifact.url).pathname, {
      kind: "trickle",
      body: artifact.bytes,
      chunk: 256,
      everyMs: 2000,
    });
    h.control.send(NODE, upgradeOp("up-slow", release));
    h.control.send(NODE, confirmOp("cf-next", "1.0.0", 1));
    await eventually(() => h!.control.reports(NODE, "cf-next").length === 1, 5000, "cf-next");
    const slow = h.control.reports(NODE, "up-slow");
    expect(phases(slow).at(-1)).toBe("FAILED");
    expect(slow.at(-1)!.code).toBe("download_too_slow");
    expect(phases(h.control.reports(NODE, "cf-next"))).toEqual(["CONFIRMED"]);
    expect(h.fleet.agent(NODE).version).toBe("1.0.0");
  });
});
