/**
 * TUF attacks on the Agent's client (tuf-js over Control's `/tuf/`) that are refused; kept as
 * evidence beside the findings. An attacker holding Control's online snapshot and timestamp
 * keys serves a snapshot that pins an older targets version (a rollback of targets); a root
 * rotation is signed by fewer old root keys than the old threshold (key compromise below
 * threshold); a properly signed rotation leads to a root that has expired. Each is refused and
 * the release is not accepted.
 */
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { AcceptedUpgrade } from "../../../agent/core/release-check.js";
import { tufClient } from "../../../agent/core/tuf-check.js";
import { sha256Hex } from "../../../control/shared/release/index.js";
import { buildRoot } from "../../../control/shared/tuf/repository.js";
import { TestTufRepo } from "../../helpers/tuf-repo.js";

const PLATFORM = "linux-amd64";
const BYTES = Buffer.from("agent for linux-amd64");
const SHA = sha256Hex(BYTES);
let repo: TestTufRepo | undefined;

afterEach(async () => {
  await repo?.stop();
  repo = undefined;
});

const target = (version: string, sequence: number) => ({
  version,
  sequence,
  platform: PLATFORM,
  length: BYTES.byteLength,
  sha256: SHA,
});
const upgrade = (version: string, sequence: bigint): AcceptedUpgrade => ({
  version,
  sequence,
  artifact: { url: "http://127.0.0.1:1/x", sha256: SHA, size: BYTES.byteLength },
});

async function client(r: TestTufRepo) {
  const dir = await mkdtemp(join(tmpdir(), "attack-tuf-"));
  await writeFile(join(dir, "root.json"), r.initialRoot);
  return tufClient({ metadataDir: dir, metadataBaseUrl: r.base });
}

describe("TUF attacks the Agent's client refuses", () => {
  it("refuses a snapshot (online key) that rolls targets back to an older version", async () => {
    repo = await TestTufRepo.create();
    await repo.publishTargets([target("2.0.0", 20)], repo.keys.targets);
    const older = repo.targets;
    const olderBytes = repo.files.get("targets.json")!;
    await repo.publishTargets([target("2.1.0", 21)], repo.keys.targets);
    const agent = await client(repo);
    expect(await agent.check(upgrade("2.1.0", 21n), PLATFORM)).toEqual({ ok: true });
    // Back to the targets that did not list 2.1.0 yet, under a fresh snapshot and timestamp.
    repo.targets = older;
    repo.files.set("targets.json", olderBytes);
    await repo.publishTimestamp(new Date(Date.now() + 3_600_000), true);
    expect(await agent.check(upgrade("2.0.0", 20n), PLATFORM)).toMatchObject({ ok: false });
  });

  it("refuses a root rotation signed by 1 of 3 old root keys where 2 are required", async () => {
    repo = await TestTufRepo.create({ rootKeys: 3, rootThreshold: 2 });
    await repo.publishTargets([target("2.0.0", 20)], repo.keys.targets);
    const agent = await client(repo);
    expect(await agent.check(upgrade("2.0.0", 20n), PLATFORM)).toEqual({ ok: true });
    const stolen = repo.keys.root[0]!;
    const fresh = await TestTufRepo.create({ rootKeys: 3 });
    await fresh.stop();
    const forged = { ...repo.keys, root: fresh.keys.root, targets: fresh.keys.targets };
    repo.root = buildRoot(repo.rootSpec(2, forged));
    await repo.signRoot([stolen, ...forged.root]);
    Object.assign(repo.keys, forged);
    await repo.publishTargets([target("6.6.6", 666)], forged.targets);
    expect(await agent.check(upgrade("6.6.6", 666n), PLATFORM)).toMatchObject({
      ok: false,
      code: "untrusted_release",
    });
  });

  it("refuses everything once the newest root has expired", async () => {
    repo = await TestTufRepo.create();
    await repo.publishTargets([target("2.0.0", 20)], repo.keys.targets);
    const agent = await client(repo);
    const oldRoot = repo.keys.root;
    repo.root = buildRoot(repo.rootSpec(2, repo.keys, new Date(Date.now() - 60_000)));
    await repo.signRoot(oldRoot);
    expect(await agent.check(upgrade("2.0.0", 20n), PLATFORM)).toMatchObject({
      ok: false,
      code: "metadata_expired",
    });
  });
});
