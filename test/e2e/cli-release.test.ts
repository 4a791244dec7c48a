/**
 * `agentctl release register|list|show` end to end: envelopes signed offline, registered
 * through the real binary with a real Control that pins the signing key.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  buildManifest,
  createEnvelope,
  generateKeyPair,
  type ReleaseKeyPair,
  serializeEnvelope,
  sha256Hex,
  signEnvelope,
} from "../../control/shared/release/index.js";
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

  beforeAll(async () => {
    pinned = await generateKeyPair();
    tc = await startTestControl({ config: { release: { pins: [pinned.pin], threshold: 1 } } });
    dir = await mkdtemp(join(tmpdir(), "agentctl-release-e2e-"));
    await writeFile(join(dir, "agent-amd64"), AGENT);
    env = { AGENTCTL_SERVER: tc.adminUrl, AGENTCTL_TOKEN: tc.operatorToken };
  });

  afterAll(async () => {
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
});
