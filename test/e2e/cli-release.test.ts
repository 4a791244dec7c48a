/**
 * `agentctl release register|list|show` end to end: envelopes signed offline, registered
 * through the real binary with a real Control that pins the signing key.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Fleet, startFleet } from "../../agent-sim/index.js";
import {
  buildManifest,
  createEnvelope,
  generateKeyPair,
  type ReleaseKeyPair,
  serializeEnvelope,
  sha256Hex,
  signEnvelope,
} from "../../control/shared/release/index.js";
import { AuditService } from "../../proto/gen/agentcontrol/admin/v1/audit_pb.js";
import { agentctl } from "../helpers/agentctl.js";
import { startTestControl, type TestControl } from "../helpers/control.js";

const AGENT = new TextEncoder().encode("the agent binary for linux-amd64");

/** Writes a signed envelope for `version`/`sequence` into `dir`, naming `agent-amd64` by file. */
async function writeRelease(
  dir: string,
  name: string,
  version: string,
  sequence: number,
  key: ReleaseKeyPair,
): Promise<string> {
  const manifest = buildManifest({
    version,
    sequence,
    expires: new Date(Date.now() + 24 * 3_600_000),
    artifacts: {
      "linux-amd64": { sha256: sha256Hex(AGENT), size: AGENT.length, file: "agent-amd64" },
    },
  });
  const envelope = await signEnvelope(createEnvelope(manifest), key.privateKey);
  const path = join(dir, name);
  await writeFile(path, serializeEnvelope(envelope));
  return path;
}

describe("agentctl release against a real Control", { timeout: 120_000 }, () => {
  let tc: TestControl;
  let dir: string;
  let pinned: ReleaseKeyPair;
  let env: Record<string, string>;
  let fleet: Fleet | undefined;

  beforeAll(async () => {
    pinned = await generateKeyPair();
    tc = await startTestControl({ config: { release: { pins: [pinned.pin], threshold: 1 } } });
    dir = await mkdtemp(join(tmpdir(), "agentctl-release-e2e-"));
    await writeFile(join(dir, "agent-amd64"), AGENT);
    env = { AGENTCTL_SERVER: tc.adminUrl, AGENTCTL_TOKEN: tc.operatorToken };
  });

  afterAll(async () => {
    await fleet?.stop();
    await tc?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("registers an envelope, uploading the artifact the manifest names", async () => {
    const path = await writeRelease(dir, "1.4.0.json", "1.4.0", 7, pinned);
    const result = await agentctl(["release", "register", path], env);
    expect(result.stderr).toBe("");
    expect(result).toMatchObject({ code: 0 });
    expect(result.stdout).toBe(
      `registered release 1.4.0 (sequence 7), signed by ${pinned.keyid}\n`,
    );
  });

  it("says when the same envelope was already registered", async () => {
    const result = await agentctl(["release", "register", join(dir, "1.4.0.json"), "--json"], env);
    expect(result.code).toBe(0);
    const json = JSON.parse(result.stdout) as { created: boolean; release: { version: string } };
    expect(json).toMatchObject({ created: false, release: { version: "1.4.0" } });
  });

  it("lists and shows registered releases", async () => {
    const listed = await agentctl(["release", "list"], env);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/^VERSION +SEQUENCE +EXPIRES +REGISTERED +PLATFORMS +SIGNERS$/m);
    expect(listed.stdout).toMatch(
      new RegExp(`^1\\.4\\.0 +7 .* linux-amd64 +${pinned.keyid}$`, "m"),
    );

    const shown = await agentctl(["release", "show", "1.4.0", "--json"], env);
    expect(shown.code).toBe(0);
    const json = JSON.parse(shown.stdout) as {
      release: {
        sequence: string;
        artifacts: { platform: string; sha256: string; servedByControl: boolean }[];
      };
    };
    expect(json.release.sequence).toBe("7");
    expect(json.release.artifacts).toEqual([
      expect.objectContaining({
        platform: "linux-amd64",
        sha256: sha256Hex(AGENT),
        servedByControl: true,
      }),
    ]);
  });

  it("passes Control's refusal through for an envelope no pinned key signed", async () => {
    const stranger = await generateKeyPair();
    const path = await writeRelease(dir, "stranger.json", "1.5.0", 8, stranger);
    const result = await agentctl(["release", "register", path], env);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/^agentctl: .*signature.*\n$/);
  });

  it("refuses a sequence that does not move the channel forward", async () => {
    const path = await writeRelease(dir, "old.json", "1.3.9", 6, pinned);
    const result = await agentctl(["release", "register", path], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^agentctl: .*sequence.*\n$/);
  });

  it("names the artifact file it cannot find before contacting Control", async () => {
    const other = join(dir, "elsewhere");
    await mkdir(other, { recursive: true });
    const path = await writeRelease(other, "1.6.0.json", "1.6.0", 9, pinned);
    const result = await agentctl(["release", "register", path], env);
    expect(result).toEqual({
      code: 2,
      stdout: "",
      stderr: `agentctl: artifact linux-amd64: ${join(other, "agent-amd64")} not found; pass --artifacts DIR with the files the manifest names\n`,
    });
    const withDir = await agentctl(["release", "register", path, "--artifacts", dir], env);
    expect(withDir.code).toBe(0);
  });

  it("refuses a viewer token", async () => {
    const path = await writeRelease(dir, "1.7.0.json", "1.7.0", 10, pinned);
    const result = await agentctl(["release", "register", path, "--token", tc.viewerToken], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^agentctl: permission denied: this token's role cannot register releases/,
    );
  });

  /** Registers `version` with an artifact of its own bytes (`size` of them). */
  const registerOwn = async (
    version: string,
    sequence: number,
    size: number,
    check?: (result: { stdout: string; stderr: string }) => void,
  ) => {
    const own = join(dir, `own-${version}`);
    await mkdir(own, { recursive: true });
    const bytes = Buffer.alloc(size, version);
    await writeFile(join(own, "agent-amd64"), bytes);
    const manifest = buildManifest({
      version,
      sequence,
      expires: new Date(Date.now() + 24 * 3_600_000),
      artifacts: {
        "linux-amd64": { sha256: sha256Hex(bytes), size, file: "agent-amd64" },
      },
    });
    const envelope = await signEnvelope(createEnvelope(manifest), pinned.privateKey);
    const path = join(own, `${version}.json`);
    await writeFile(path, serializeEnvelope(envelope));
    const result = await agentctl(["release", "register", path], env);
    expect(result.code, result.stderr).toBe(0);
    check?.(result);
    return { path, sha256: sha256Hex(bytes) };
  };
  const stored = async (sha256: string) =>
    (await tc.control.db.pool.query("select 1 from artifact_files where sha256 = $1", [sha256]))
      .rowCount === 1;

  it("shows the upload's progress for a large artifact on stderr, a line per tenth off a terminal, then that Control verifies it", async () => {
    const mib = 1024 * 1024;
    const { sha256 } = await registerOwn("2.9.0", 29, 24 * mib, (result) => {
      const lines = result.stderr.trimEnd().split("\n");
      // 24 MiB and a small envelope: a line in each tenth up to 90 %, then one saying it was all sent.
      expect(lines.slice(0, -1)).toHaveLength(9);
      // One line in each tenth, at the first 1 MiB piece that reached it.
      lines.slice(0, -1).forEach((line, i) => {
        const shown =
          /^uploading 1 artifact file: (\d+)% \([\d.]+ MiB of 24\.0 MiB, [\d.]+ [KMG]?i?B\/s\)$/.exec(
            line,
          );
        expect(shown, line).not.toBeNull();
        expect(Math.floor(Number(shown?.[1]) / 10)).toBe(i + 1);
      });
      expect(lines.at(-1)).toMatch(
        /^uploading 1 artifact file: 24\.0 MiB sent in \d+\.\d s; waiting for Control to verify and store it$/,
      );
      expect(result.stdout).toBe(
        `registered release 2.9.0 (sequence 29), signed by ${pinned.keyid}\n`,
      );
    });
    expect(await stored(sha256)).toBe(true);
  });

  it("registers the same envelope again without uploading the artifacts Control holds, and says so", async () => {
    const path = join(dir, "own-2.9.0", "2.9.0.json");
    const result = await agentctl(["release", "register", path], env);
    expect(result.code, result.stderr).toBe(0);
    // No upload progress: the 24 MiB were not sent again.
    expect(result.stderr).toBe("");
    expect(result.stdout).toBe(
      "release 2.9.0 (sequence 29) was already registered; nothing changed (Control holds its artifact file: nothing uploaded)\n",
    );
    const json = await agentctl(["release", "register", path, "--json"], env);
    expect(JSON.parse(json.stdout)).toMatchObject({
      created: false,
      release: { version: "2.9.0" },
    });
  });

  it("prunes the artifact bytes of releases nothing needs: yanked first, keeping what nodes run and may roll back to and the newest N; --dry-run changes nothing; the metadata stays", async () => {
    const kib = 64 * 1024;
    const r = {
      "3.0.0": await registerOwn("3.0.0", 30, kib),
      "3.1.0": await registerOwn("3.1.0", 31, kib),
      "3.2.0": await registerOwn("3.2.0", 32, kib),
      "3.3.0": await registerOwn("3.3.0", 33, kib),
      "3.4.0": await registerOwn("3.4.0", 34, kib),
    };
    // A node runs 3.0.0 and may roll back to 3.1.0.
    fleet = await startFleet({
      server: tc.agentAddress,
      joinToken: await tc.joinToken(),
      count: 1,
      idPrefix: "prune",
      version: "3.0.0",
    });
    await fleet.waitUntil((f) => f.welcomedCount() === 1, 20_000, "the agent welcomed");
    await tc.control.db.pool.query(
      "update nodes set previous_version = '3.1.0' where id like 'prune-%'",
    );
    const yanked = await agentctl(
      ["release", "yank", "3.3.0", "--reason", "bad build", "--yes"],
      env,
    );
    expect(yanked.code, yanked.stderr).toBe(0);

    const dry = await agentctl(["release", "prune", "--keep", "1", "--dry-run"], env);
    expect(dry.stderr).toBe("");
    expect(dry.code).toBe(0);
    const rows = dry.stdout.trimEnd().split("\n");
    expect(rows[0]).toMatch(/^VERSION +SEQUENCE +YANKED +FREES$/);
    // Yanked first, then oldest first; 1.x share one file with no kept release.
    expect(rows.slice(1, 3).map((l) => l.split(/ +/).slice(0, 3))).toEqual([
      ["3.3.0", "33", "yes"],
      ["1.4.0", "7", "no"],
    ]);
    expect(dry.stdout).toMatch(/^3\.2\.0 +32 +no +64\.0 KiB$/m);
    expect(dry.stdout).not.toMatch(/^3\.(0|1|4)\.0 /m);
    expect(dry.stdout).toMatch(/^would free .* of \d+ releases \(dry run: nothing changed\)$/m);
    for (const v of ["3.2.0", "3.3.0"] as const) expect(await stored(r[v].sha256)).toBe(true);

    const viewer = await agentctl(
      ["release", "prune", "--keep", "1", "--yes", "--token", tc.viewerToken],
      env,
    );
    expect(viewer.code).toBe(1);
    expect(viewer.stderr).toMatch(/^agentctl: permission denied: /);

    const pruned = await agentctl(["release", "prune", "--keep", "1", "--yes"], env);
    expect(pruned.code, pruned.stderr).toBe(0);
    expect(pruned.stdout).toMatch(
      /^freed .* of \d+ releases; kept 3\.4\.0 \(one of the newest 1\), 3\.1\.0 \(a node may roll back to it\), 3\.0\.0 \(a node runs it\)$/m,
    );
    for (const v of ["3.2.0", "3.3.0"] as const) expect(await stored(r[v].sha256)).toBe(false);
    for (const v of ["3.0.0", "3.1.0", "3.4.0"] as const)
      expect(await stored(r[v].sha256)).toBe(true);

    // The signed metadata stays: show and list still answer, and say the bytes are gone.
    const shown = await agentctl(["release", "show", "3.2.0", "--json"], env);
    expect(shown.code).toBe(0);
    expect(
      (JSON.parse(shown.stdout) as { release: { artifacts: { pruned?: boolean }[] } }).release
        .artifacts[0]?.pruned,
    ).toBe(true);
    const { events } = await tc.client(AuditService).listAuditEvents({ action: "release.prune" });
    expect(events).toHaveLength(1);
    expect(events[0]?.message).toMatch(/^pruned the artifacts of \d+ releases \(3\.3\.0, /);

    // No campaign can be planned to a pruned release: no node could download it.
    const plan = await agentctl(["campaign", "plan", "--version", "3.2.0", "--json"], env);
    expect(`${plan.stdout}${plan.stderr}`).toMatch(/has no artifact for linux-amd64/);

    // Nothing more to free: a second prune says so.
    const again = await agentctl(["release", "prune", "--keep", "1", "--yes"], env);
    expect(again.stdout).toMatch(/^nothing to prune/m);
    // Registering the same envelope with its files again brings the bytes back.
    const back = await agentctl(["release", "register", r["3.2.0"].path], env);
    expect(back.code, back.stderr).toBe(0);
    expect(await stored(r["3.2.0"].sha256)).toBe(true);
  });
});
