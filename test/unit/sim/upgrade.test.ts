import { afterEach, describe, expect, it } from "vitest";
import { MAX_FRUITLESS_RESUMES } from "../../../agent/core/download-resume.js";
import { eventually, type Harness, phases, startHarness } from "./harness.js";
import { makeRelease, newKey, upgradeOp } from "./release-fixture.js";

const NODE = "sim-00001";
let h: Harness | undefined;

afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function started(options: Parameters<typeof startHarness>[0] = {}): Promise<Harness> {
  h = await startHarness(options);
  await h.fleet.waitUntil((f) => f.welcomedCount() === f.agents.length);
  return h;
}

/** Waits until `opId` got a final report (REFUSED, FAILED or RESTARTING). */
async function settle(harness: Harness, opId: string, nodeId = NODE, timeoutMs = 5000) {
  await eventually(
    () =>
      ["REFUSED", "FAILED", "RESTARTING"].includes(
        phases(harness.control.reports(nodeId, opId)).at(-1) ?? "",
      ),
    timeoutMs,
    `${opId} to settle`,
  );
  return phases(harness.control.reports(nodeId, opId));
}

describe("upgrading a simulated agent", () => {
  it("verifies, downloads, applies, restarts and comes back with a new boot id on the new version", async () => {
    const { control, artifacts, key, fleet } = await started();
    const agent = fleet.agent(NODE);
    const bootId = agent.bootId;
    const release = await makeRelease(artifacts, key, "1.1.0", 2);
    control.send(NODE, upgradeOp("op-1", release));
    expect(await settle(h!, "op-1")).toEqual([
      "ACCEPTED",
      "DOWNLOADING",
      "VERIFYING",
      "APPLYING",
      "RESTARTING",
    ]);
    await eventually(() => control.sessionsOf(NODE).length === 2 && agent.welcomed);
    const [before, after] = control.sessionsOf(NODE);
    expect(before!.endedAt).toBeDefined();
    expect(after!.hello).toMatchObject({ agentVersion: "1.1.0", previousVersion: "1.0.0" });
    expect(after!.hello!.bootId).not.toBe(bootId);
    expect(agent.version).toBe("1.1.0");
    expect(agent.applyCount("op-1")).toBe(1);
    expect(artifacts.hits.get("/1.1.0/linux-amd64")).toBe(1);
    await eventually(() => control.live(NODE)?.configStatuses.length === 1);
    expect(control.live(NODE)!.configStatuses[0]!.ok).toBe(true);
  });

  it("fails with sha256_mismatch when the downloaded bytes were tampered with", async () => {
    const { control, artifacts, key } = await started();
    const release = await makeRelease(artifacts, key, "1.1.0", 2);
    const tampered = new Uint8Array(release.artifacts["linux-amd64"]!.bytes);
    tampered[0] = (tampered[0]! + 1) % 256;
    artifacts.routes.set("/1.1.0/linux-amd64", { kind: "bytes", body: tampered });
    control.send(NODE, upgradeOp("op-1", release));
    expect(await settle(h!, "op-1")).toEqual(["ACCEPTED", "DOWNLOADING", "VERIFYING", "FAILED"]);
    expect(control.reports(NODE, "op-1").at(-1)).toMatchObject({
      code: "sha256_mismatch",
      version: "1.0.0",
    });
    expect(h!.fleet.agent(NODE).version).toBe("1.0.0");
    expect(control.sessionsOf(NODE)).toHaveLength(1);
  });

  it.each([
    ["announced by Content-Length", "bytes"],
    ["streamed without a length", "chunked"],
  ] as const)(
    "fails with artifact_too_large when more than size bytes arrive (%s)",
    async (_, kind) => {
      const { control, artifacts, key } = await started();
      const release = await makeRelease(artifacts, key, "1.1.0", 2);
      const real = release.artifacts["linux-amd64"]!.bytes;
      const bigger = new Uint8Array(real.byteLength + 100);
      bigger.set(real);
      artifacts.routes.set("/1.1.0/linux-amd64", { kind, body: bigger });
      control.send(NODE, upgradeOp("op-1", release));
      expect(await settle(h!, "op-1")).toEqual(["ACCEPTED", "DOWNLOADING", "FAILED"]);
      expect(control.reports(NODE, "op-1").at(-1)!.code).toBe("artifact_too_large");
    },
  );

  it("fails with download_failed on an HTTP error and on a download that stalls on every resume", async () => {
    const { control, artifacts, key } = await started({ downloadStallMs: 200 });
    const release = await makeRelease(artifacts, key, "1.1.0", 2);
    artifacts.routes.set("/1.1.0/linux-amd64", { kind: "status", code: 503 });
    control.send(NODE, upgradeOp("op-1", release));
    await settle(h!, "op-1");
    expect(control.reports(NODE, "op-1").at(-1)).toMatchObject({ code: "download_failed" });
    const second = await makeRelease(artifacts, key, "1.2.0", 3);
    artifacts.routes.set("/1.2.0/linux-amd64", { kind: "stall", first: new Uint8Array(10) });
    control.send(NODE, upgradeOp("op-2", second));
    // A stall is a cut: resumed (the server ignores the range and stalls again) until
    // MAX_FRUITLESS_RESUMES in a row kept nothing new, after the Agent's backoff.
    await settle(h!, "op-2", NODE, 30_000);
    expect(artifacts.hits.get("/1.2.0/linux-amd64")).toBe(2 + MAX_FRUITLESS_RESUMES);
    expect(control.reports(NODE, "op-2").at(-1)).toMatchObject({ code: "download_failed" });
    expect(control.reports(NODE, "op-2").at(-1)!.message).toContain("no data for 200 ms");
  });

  it("refuses a release signed by a key it does not pin, and any release without pins", async () => {
    const { control, artifacts } = await started();
    const stranger = await newKey();
    const release = await makeRelease(artifacts, stranger, "1.1.0", 2);
    control.send(NODE, upgradeOp("op-1", release));
    expect(await settle(h!, "op-1")).toEqual(["REFUSED"]);
    expect(control.reports(NODE, "op-1")[0]!.code).toBe("untrusted_release");
    expect(control.reports(NODE, "op-1")[0]!.message).toContain("insufficient_signatures");
    await h!.close();
    h = await startHarness({ pins: [] });
    await h.fleet.waitUntil((f) => f.welcomedCount() === 1);
    const signed = await makeRelease(h.artifacts, h.key, "1.1.0", 2);
    h.control.send(NODE, upgradeOp("op-2", signed));
    expect(await settle(h, "op-2")).toEqual(["REFUSED"]);
    expect(h.control.reports(NODE, "op-2")[0]!.code).toBe("untrusted_release");
    expect(h.artifacts.hits.size).toBe(0);
  });

  it("refuses a tampered signature", async () => {
    const { control, artifacts, key } = await started();
    const release = await makeRelease(artifacts, key, "1.1.0", 2);
    const sig = release.envelope.signatures[0]!.sig;
    sig[5] = (sig[5]! + 1) % 256;
    control.send(NODE, upgradeOp("op-1", release));
    expect(await settle(h!, "op-1")).toEqual(["REFUSED"]);
    expect(control.reports(NODE, "op-1")[0]!.code).toBe("untrusted_release");
  });

  it("refuses an artifact for another platform", async () => {
    const { control, artifacts, key } = await started();
    const release = await makeRelease(artifacts, key, "1.1.0", 2, ["linux-amd64", "linux-arm64"]);
    control.send(NODE, upgradeOp("op-1", release, "linux-arm64"));
    expect(await settle(h!, "op-1")).toEqual(["REFUSED"]);
    expect(control.reports(NODE, "op-1")[0]!.code).toBe("wrong_platform");
    const armOnly = await makeRelease(artifacts, key, "1.2.0", 3, ["linux-arm64"]);
    control.send(
      NODE,
      upgradeOp("op-2", armOnly, "linux-arm64", { artifact: { platform: "linux-amd64" } }),
    );
    await settle(h!, "op-2");
    expect(control.reports(NODE, "op-2")[0]!.code).toBe("wrong_platform");
  });

  it("refuses a sequence below its durable confirmed sequence", async () => {
    const { control, artifacts, key, fleet } = await started();
    fleet.agent(NODE).state.confirmedSequence = "5";
    const release = await makeRelease(artifacts, key, "1.1.0", 3);
    control.send(NODE, upgradeOp("op-1", release));
    expect(await settle(h!, "op-1")).toEqual(["REFUSED"]);
    expect(control.reports(NODE, "op-1")[0]!.code).toBe("sequence_rollback");
  });

  it("refuses an operation whose artifact or version is not the signed one", async () => {
    const { control, artifacts, key } = await started();
    const release = await makeRelease(artifacts, key, "1.1.0", 2);
    control.send(
      NODE,
      upgradeOp("op-1", release, "linux-amd64", { artifact: { sha256: "0".repeat(64) } }),
    );
    control.send(NODE, upgradeOp("op-2", release, "linux-amd64", { artifact: { size: 10 } }));
    control.send(NODE, upgradeOp("op-3", release, "linux-amd64", { version: "9.9.9" }));
    for (const op of ["op-1", "op-2", "op-3"]) await settle(h!, op);
    expect(control.reports(NODE, "op-1")[0]!.code).toBe("artifact_mismatch");
    expect(control.reports(NODE, "op-2")[0]!.code).toBe("artifact_mismatch");
    expect(control.reports(NODE, "op-3")[0]!.code).toBe("manifest_mismatch");
  });

  it("downloads a release once for the whole fleet", async () => {
    const { control, artifacts, key, fleet } = await started({ count: 20 });
    const release = await makeRelease(artifacts, key, "1.1.0", 2);
    for (const agent of fleet.agents)
      control.send(agent.nodeId, upgradeOp(`op-${agent.nodeId}`, release));
    await fleet.waitUntil(
      (f) => f.agents.every((a) => a.version === "1.1.0" && a.welcomed),
      10_000,
    );
    expect(artifacts.hits.get("/1.1.0/linux-amd64")).toBe(1);
    expect(fleet.stats().downloads).toBe(1);
  });

  it("downloads once per agent when the fleet shares no downloads, as a fleet of hosts would", async () => {
    const { control, artifacts, key, fleet } = await started({ count: 5, shareDownloads: false });
    const release = await makeRelease(artifacts, key, "1.1.0", 2);
    for (const agent of fleet.agents)
      control.send(agent.nodeId, upgradeOp(`op-${agent.nodeId}`, release));
    await fleet.waitUntil(
      (f) => f.agents.every((a) => a.version === "1.1.0" && a.welcomed),
      10_000,
    );
    expect(artifacts.hits.get("/1.1.0/linux-amd64")).toBe(5);
  });

  it("trusts the operation's sha256 and size without downloading when download is off", async () => {
    const { control, artifacts, key, fleet } = await started({ download: false });
    const release = await makeRelease(artifacts, key, "1.1.0", 2);
    control.send(NODE, upgradeOp("op-1", release));
    await fleet.waitUntil((f) => f.agent(NODE).version === "1.1.0" && f.agent(NODE).welcomed);
    expect(artifacts.hits.size).toBe(0);
  });
});
