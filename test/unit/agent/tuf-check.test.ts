import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { AcceptedUpgrade } from "../../../agent/core/release-check.js";
import { tufClient } from "../../../agent/core/tuf-check.js";
import { sha256Hex } from "../../../control/shared/release/index.js";
import { tufSigner } from "../../../control/shared/tuf/keys.js";
import { buildRoot, metadataBytes } from "../../../control/shared/tuf/repository.js";
import { TestTufRepo } from "../../helpers/tuf-repo.js";

const PLATFORM = "linux-amd64";
const BYTES = Buffer.from("agent 2.0.0 for linux-amd64");
const SHA = sha256Hex(BYTES);
let repo: TestTufRepo | undefined;

afterEach(async () => {
  await repo?.stop();
  repo = undefined;
});

function upgrade(over: Partial<AcceptedUpgrade> = {}): AcceptedUpgrade {
  return {
    version: "2.0.0",
    sequence: 20n,
    artifact: { url: "http://127.0.0.1:1/x", sha256: SHA, size: BYTES.byteLength },
    ...over,
  };
}

const release = {
  version: "2.0.0",
  sequence: 20,
  platform: PLATFORM,
  length: BYTES.byteLength,
  sha256: SHA,
};

/** An Agent's metadata directory holding only the repository's initial root. */
async function agentDir(r: TestTufRepo): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "agent-tuf-"));
  await writeFile(join(dir, "root.json"), r.initialRoot);
  return dir;
}

describe("the Agent accepts only releases that current TUF metadata lists", () => {
  it("accepts a release listed with its length, sha256, version and sequence", async () => {
    repo = await TestTufRepo.create();
    await repo.publishTargets([release], repo.keys.targets);
    const client = tufClient({ metadataDir: await agentDir(repo), metadataBaseUrl: repo.base });
    expect(await client.check(upgrade(), PLATFORM)).toEqual({ ok: true });
  });

  it.each<[string, Partial<AcceptedUpgrade>]>([
    ["another version", { version: "2.0.1" }],
    ["another sequence", { sequence: 21n }],
    ["other bytes", { artifact: { url: "", sha256: "0".repeat(64), size: BYTES.byteLength } }],
    ["another length", { artifact: { url: "", sha256: SHA, size: BYTES.byteLength + 1 } }],
  ])("refuses %s than the listed target", async (_what, over) => {
    repo = await TestTufRepo.create();
    await repo.publishTargets([release], repo.keys.targets);
    const client = tufClient({ metadataDir: await agentDir(repo), metadataBaseUrl: repo.base });
    expect(await client.check(upgrade(over), PLATFORM)).toMatchObject({
      ok: false,
      code: "untrusted_release",
    });
  });

  it("refuses a release that is not listed, and one for another platform", async () => {
    repo = await TestTufRepo.create();
    await repo.publishTargets([release], repo.keys.targets);
    const client = tufClient({ metadataDir: await agentDir(repo), metadataBaseUrl: repo.base });
    expect(await client.check(upgrade(), "linux-arm64")).toMatchObject({
      ok: false,
      code: "untrusted_release",
      message: expect.stringContaining("do not list agent/2.0.0/linux-arm64"),
    });
  });

  it("refuses targets signed by fewer targets keys than the threshold", async () => {
    repo = await TestTufRepo.create({ targetsKeys: 3, targetsThreshold: 2 });
    await repo.publishTargets([release], repo.keys.targets.slice(0, 1));
    const client = tufClient({ metadataDir: await agentDir(repo), metadataBaseUrl: repo.base });
    expect(await client.check(upgrade(), PLATFORM)).toMatchObject({
      ok: false,
      code: "untrusted_release",
      message: expect.stringContaining("signed by 1/2 keys"),
    });
  });

  it("reports a freeze (metadata_expired) when the timestamp has expired", async () => {
    repo = await TestTufRepo.create();
    await repo.publishTargets([release], repo.keys.targets, new Date(Date.now() - 1000));
    const client = tufClient({ metadataDir: await agentDir(repo), metadataBaseUrl: repo.base });
    expect(await client.check(upgrade(), PLATFORM)).toMatchObject({
      ok: false,
      code: "metadata_expired",
    });
  });

  it("refuses mixed-and-matched metadata: a snapshot that is not the one the timestamp pins", async () => {
    repo = await TestTufRepo.create();
    await repo.publishTargets([release], repo.keys.targets);
    const pinned = repo.files.get("snapshot.json")!;
    await repo.publishTargets([{ ...release, version: "2.0.1" }], repo.keys.targets);
    repo.files.set("snapshot.json", pinned); // old snapshot beside the new timestamp
    const client = tufClient({ metadataDir: await agentDir(repo), metadataBaseUrl: repo.base });
    expect(await client.check(upgrade(), PLATFORM)).toMatchObject({
      ok: false,
      code: "untrusted_release",
      message: expect.stringMatching(/snapshot/i),
    });
  });

  it("refuses a timestamp rolled back below the one it already trusts", async () => {
    repo = await TestTufRepo.create();
    await repo.publishTargets([release], repo.keys.targets);
    const old = repo.files.get("timestamp.json")!;
    await repo.publishTimestamp(new Date(Date.now() + 3_600_000));
    const dir = await agentDir(repo);
    const client = tufClient({ metadataDir: dir, metadataBaseUrl: repo.base });
    expect(await client.check(upgrade(), PLATFORM)).toEqual({ ok: true });
    repo.files.set("timestamp.json", old);
    expect(await client.check(upgrade(), PLATFORM)).toMatchObject({
      ok: false,
      code: "untrusted_release",
      message: expect.stringContaining("less than current version"),
    });
  });

  it("follows a root rotation signed by the old and the new root keys, and trusts the new targets key", async () => {
    repo = await TestTufRepo.create();
    await repo.publishTargets([release], repo.keys.targets);
    const dir = await agentDir(repo);
    const client = tufClient({ metadataDir: dir, metadataBaseUrl: repo.base });
    expect(await client.check(upgrade(), PLATFORM)).toEqual({ ok: true });
    const fresh = await TestTufRepo.create();
    const oldRootKeys = repo.keys.root;
    const rotated = { ...repo.keys, root: fresh.keys.root, targets: fresh.keys.targets };
    await fresh.stop();
    repo.root = buildRoot(repo.rootSpec(2, rotated));
    await repo.signRoot([...oldRootKeys, ...rotated.root]);
    Object.assign(repo.keys, rotated);
    await repo.publishTargets([{ ...release, version: "2.1.0", sequence: 21 }], rotated.targets);
    expect(await client.check(upgrade({ version: "2.1.0", sequence: 21n }), PLATFORM)).toEqual({
      ok: true,
    });
  });

  it("refuses a rotated root that the old root keys did not sign", async () => {
    repo = await TestTufRepo.create();
    await repo.publishTargets([release], repo.keys.targets);
    const fresh = await TestTufRepo.create();
    const forged = { ...repo.keys, root: fresh.keys.root, targets: fresh.keys.targets };
    await fresh.stop();
    repo.root = buildRoot(repo.rootSpec(2, forged));
    for (const k of forged.root) repo.root.sign((await tufSigner(k.privateKey)).sign);
    repo.files.set("2.root.json", metadataBytes(repo.root));
    await repo.publishTargets([{ ...release, version: "2.1.0", sequence: 21 }], forged.targets);
    const client = tufClient({ metadataDir: await agentDir(repo), metadataBaseUrl: repo.base });
    expect(
      await client.check(upgrade({ version: "2.1.0", sequence: 21n }), PLATFORM),
    ).toMatchObject({
      ok: false,
      code: "untrusted_release",
      message: expect.stringMatching(/root was signed by 0\/1 keys/),
    });
  });

  it("survives a root.json torn by a crash: the last trusted root is restored from its durable copy", async () => {
    repo = await TestTufRepo.create();
    await repo.publishTargets([release], repo.keys.targets);
    const dir = await agentDir(repo);
    const client = tufClient({ metadataDir: dir, metadataBaseUrl: repo.base });
    expect(await client.check(upgrade(), PLATFORM)).toEqual({ ok: true });
    const whole = await readFile(join(dir, "root.json"));
    await writeFile(join(dir, "root.json"), whole.subarray(0, whole.byteLength >> 1));
    expect(await client.check(upgrade(), PLATFORM)).toEqual({ ok: true });
    expect(await readFile(join(dir, "root.json"))).toEqual(whole);
  });

  it("refuses targets signed by a targets key that a root rotation revoked", async () => {
    repo = await TestTufRepo.create();
    await repo.publishTargets([release], repo.keys.targets);
    const client = tufClient({ metadataDir: await agentDir(repo), metadataBaseUrl: repo.base });
    expect(await client.check(upgrade(), PLATFORM)).toEqual({ ok: true });
    const revoked = repo.keys.targets;
    const fresh = await TestTufRepo.create();
    const rotated = { ...repo.keys, targets: fresh.keys.targets };
    await fresh.stop();
    repo.root = buildRoot(repo.rootSpec(2, rotated));
    await repo.signRoot(repo.keys.root);
    await repo.publishTargets([{ ...release, version: "2.1.0", sequence: 21 }], revoked);
    expect(
      await client.check(upgrade({ version: "2.1.0", sequence: 21n }), PLATFORM),
    ).toMatchObject({
      ok: false,
      code: "untrusted_release",
      message: expect.stringMatching(/targets was signed by 0\/1 keys/),
    });
  });
});
