/**
 * The release channel as a TUF repository, end to end through real parts: `agentctl tuf`
 * writes and signs root and targets offline; a real Control serves them at `/tuf/` on its
 * downloads listener and signs snapshot and timestamp with its online keys; the Agent's
 * tuf-js client (as the real Agent runs it) accepts what is listed, sees a release added
 * without Control restarting, follows a root rotation, and refuses what is not listed.
 */
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AcceptedUpgrade } from "../../agent/core/release-check.js";
import { tufClient } from "../../agent/core/tuf-check.js";
import { sha256Hex } from "../../control/shared/release/index.js";
import { startTestControl, type TestControl } from "../helpers/control.js";
import { AgentctlTufRepo } from "../helpers/tuf-channel.js";
import { runCli } from "../unit/cli/run-cli.js";

const PLATFORM = "linux-amd64";

describe("agentctl tuf, Control's /tuf/ and the Agent's TUF client", () => {
  let dir = "";
  let repo = "";
  let channel: AgentctlTufRepo;
  let tc: TestControl;
  const artifact = new Map<string, Buffer>();

  const cli = (...argv: string[]) => channel.cli(...argv);
  const upgrade = (version: string, sequence: number): AcceptedUpgrade => {
    const bytes = artifact.get(version) ?? Buffer.from("none");
    return {
      version,
      sequence: BigInt(sequence),
      artifact: { url: "", sha256: sha256Hex(bytes), size: bytes.byteLength },
    };
  };
  const addTarget = (version: string, sequence: number) =>
    channel.addTarget(version, sequence, PLATFORM, join(dir, `agent-${version}`));

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "tuf-channel-"));
    channel = await AgentctlTufRepo.create(dir, [
      "root1",
      "root2",
      "root3",
      "targets1",
      "targets2",
      "snapshot",
      "timestamp",
    ]);
    repo = channel.repo;
    for (const v of ["2.0.0", "2.1.0", "2.2.0"]) {
      const file = join(dir, `agent-${v}`);
      artifact.set(v, Buffer.from(`agent ${v} ${PLATFORM}`));
      await writeFile(file, artifact.get(v)!);
    }
    await channel.init({
      root: ["root1", "root2"],
      rootThreshold: 2,
      targets: "targets1",
      snapshot: "snapshot",
      timestamp: "timestamp",
    });
    await addTarget("2.0.0", 20);
    await channel.sign("targets", "targets1");
    tc = await startTestControl({
      config: {
        downloads: { addr: "127.0.0.1:0", requireAuth: true },
        tuf: {
          dir: repo,
          snapshotKey: channel.key("snapshot"),
          timestampKey: channel.key("timestamp"),
          timestampExpirySeconds: 120,
          timestampWindowSeconds: 1,
        },
      },
    });
  }, 120_000);

  afterAll(async () => {
    await tc?.stop();
  });

  async function agent() {
    const metadataDir = await mkdtemp(join(tmpdir(), "tuf-agent-"));
    await writeFile(join(metadataDir, "root.json"), await readFile(join(repo, "1.root.json")));
    return tufClient({ metadataDir, metadataBaseUrl: `${tc.control.downloadsUrl}/tuf/` });
  }

  it("serves the metadata without a credential, even where downloads require one", async () => {
    const base = `${tc.control.downloadsUrl}/tuf`;
    for (const name of [
      "root.json",
      "1.root.json",
      "targets.json",
      "snapshot.json",
      "timestamp.json",
    ]) {
      expect((await fetch(`${base}/${name}`)).status, name).toBe(200);
    }
    expect((await fetch(`${base}/../state.json`)).status).toBe(404);
    expect((await fetch(`${base}/2.root.json`)).status).toBe(404);
    expect(
      (await fetch(`${tc.control.downloadsUrl}/downloads/agent/2.0.0/${PLATFORM}`)).status,
    ).toBe(401);
  });

  it("accepts a listed release and refuses one that is not listed", async () => {
    const client = await agent();
    expect(await client.check(upgrade("2.0.0", 20), PLATFORM)).toEqual({ ok: true });
    expect(await client.check(upgrade("2.1.0", 21), PLATFORM)).toMatchObject({
      ok: false,
      code: "untrusted_release",
    });
  });

  it("re-signs the timestamp every window, so a long-lived Agent never sees it expire", async () => {
    const first = JSON.parse(
      await (await fetch(`${tc.control.downloadsUrl}/tuf/timestamp.json`)).text(),
    );
    await new Promise((r) => setTimeout(r, 1100));
    const second = JSON.parse(
      await (await fetch(`${tc.control.downloadsUrl}/tuf/timestamp.json`)).text(),
    );
    expect(second.signed.version).toBeGreaterThan(first.signed.version);
    expect(Date.parse(second.signed.expires)).toBeGreaterThan(Date.now());
  });

  it("sees a release added to targets without a restart (a new snapshot), and refuses unsigned targets", async () => {
    const client = await agent();
    await addTarget("2.1.0", 21);
    // Unsigned targets: not trusted, whatever Control's snapshot says.
    expect(await client.check(upgrade("2.1.0", 21), PLATFORM)).toMatchObject({
      ok: false,
      code: "untrusted_release",
    });
    await channel.sign("targets", "targets1");
    expect(await client.check(upgrade("2.1.0", 21), PLATFORM)).toEqual({ ok: true });
  });

  it("refuses a release taken out of the signed targets (a yank), even while Control offers it", async () => {
    const client = await agent();
    expect(await client.check(upgrade("2.0.0", 20), PLATFORM)).toEqual({ ok: true });
    const removed = await cli("tuf", "remove-target", "2.0.0", "--repo", repo);
    expect(removed.stdout).toMatch(/no longer lists 2\.0\.0 \(1 artifact\(s\); unsigned\)/);
    await channel.sign("targets", "targets1");
    expect(await client.check(upgrade("2.0.0", 20), PLATFORM)).toMatchObject({
      ok: false,
      code: "untrusted_release",
    });
    expect(await client.check(upgrade("2.1.0", 21), PLATFORM)).toEqual({ ok: true });
    const again = await runCli(["tuf", "remove-target", "2.0.0", "--repo", repo]);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/lists no artifact of 2\.0\.0; nothing changed/);
  });

  it("follows a root rotation that replaces a root key and the targets key", async () => {
    const client = await agent();
    expect(await client.check(upgrade("2.1.0", 21), PLATFORM)).toEqual({ ok: true });
    await cli(
      "tuf",
      "rotate-root",
      "--repo",
      repo,
      "--root-key",
      channel.pin("root2"),
      "--root-key",
      channel.pin("root3"),
      "--root-threshold",
      "2",
      "--targets-key",
      channel.pin("targets2"),
    );
    for (const k of ["root1", "root2", "root3"]) await channel.sign("root", k);
    await addTarget("2.2.0", 22);
    // The old targets key is no longer one of the newest root's.
    const old = await runCli([
      "tuf",
      "sign",
      "--repo",
      repo,
      "--role",
      "targets",
      "--key",
      channel.key("targets1"),
    ]);
    expect(old.code).toBe(2);
    expect(old.stderr).toMatch(/not a targets key/);
    await channel.sign("targets", "targets2");
    expect(await client.check(upgrade("2.2.0", 22), PLATFORM)).toEqual({ ok: true });
  });

  it("refuses bad input with one line and changes nothing", async () => {
    const before = await readFile(join(repo, "targets.json"));
    const wrong = await runCli([
      "tuf",
      "sign",
      "--repo",
      repo,
      "--role",
      "snapshot",
      "--key",
      channel.key("snapshot"),
    ]);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/--role must be root or targets/);
    const again = await runCli([
      "tuf",
      "init",
      "--repo",
      repo,
      "--root-key",
      channel.pin("root1"),
      "--targets-key",
      channel.pin("targets1"),
      "--snapshot-key",
      channel.pin("snapshot"),
      "--timestamp-key",
      channel.pin("timestamp"),
    ]);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/already holds metadata/);
    const over = await runCli(["tuf", "rotate-root", "--repo", repo, "--root-threshold", "3"]);
    expect(over.code).toBe(2);
    expect(over.stderr).toMatch(/root threshold/);
    expect(await readFile(join(repo, "targets.json"))).toEqual(before);
  });
});
