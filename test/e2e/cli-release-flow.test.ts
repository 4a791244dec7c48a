/**
 * The operator's whole offline-to-online release flow through the real agentctl binary:
 * two signers make keys, one builds a manifest from artifact files, both sign, Control
 * (pinning both keys, threshold 2) registers the release and serves its artifact.
 */
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { agentctl } from "../helpers/agentctl.js";
import { startTestControl, type TestControl } from "../helpers/control.js";

describe("release flow through agentctl: keygen, manifest, sign twice, register with threshold 2, list", () => {
  let tc: TestControl | undefined;
  let dir = "";
  afterAll(async () => {
    await tc?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("takes artifact files to a registered, threshold-signed release", async () => {
    dir = await mkdtemp(join(tmpdir(), "release-flow-"));
    const pins: string[] = [];
    for (const signer of ["alice", "bob"]) {
      const made = await agentctl(["release", "keygen", "--out", join(dir, `${signer}.key`)]);
      expect(made.code).toBe(0);
      const pin = /ed25519:[A-Za-z0-9_-]{43}/.exec(made.stdout)?.[0];
      expect(pin).toBeDefined();
      pins.push(pin ?? "");
      expect((await stat(join(dir, `${signer}.key`))).mode & 0o777).toBe(0o600);
    }
    await writeFile(join(dir, "agent-linux-amd64"), "the agent, version 1.4.0\n");
    const manifest = await agentctl([
      "release",
      "manifest",
      "--version",
      "1.4.0",
      "--sequence",
      "14",
      "--artifact",
      `linux-amd64=${join(dir, "agent-linux-amd64")}`,
      "--expires",
      "720h",
      "--out",
      join(dir, "manifest.json"),
    ]);
    expect(manifest.code).toBe(0);
    const envelope = join(dir, "release.json");
    expect(
      (
        await agentctl([
          "release",
          "sign",
          "--key",
          join(dir, "alice.key"),
          "--in",
          join(dir, "manifest.json"),
          "--out",
          envelope,
        ])
      ).code,
    ).toBe(0);
    expect(
      (
        await agentctl([
          "release",
          "sign",
          "--key",
          join(dir, "bob.key"),
          "--in",
          envelope,
          "--out",
          envelope,
        ])
      ).code,
    ).toBe(0);
    const verified = await agentctl([
      "release",
      "verify",
      "--pin",
      pins[0] ?? "",
      "--pin",
      pins[1] ?? "",
      "--threshold",
      "2",
      envelope,
    ]);
    expect(verified.code).toBe(0);

    tc = await startTestControl({ config: { release: { pins, threshold: 2 } } });
    const env = { AGENTCTL_SERVER: tc.adminUrl, AGENTCTL_TOKEN: tc.operatorToken };
    const registered = await agentctl(["release", "register", envelope, "--artifacts", dir], env);
    expect(registered.stderr).toBe("");
    expect(registered.code).toBe(0);
    const listed = await agentctl(["release", "list", "--json"], env);
    expect(listed.code).toBe(0);
    const releases = (
      JSON.parse(listed.stdout) as {
        releases: Array<{
          version: string;
          signerKeyIds: string[];
          artifacts: Array<{ url: string }>;
        }>;
      }
    ).releases;
    expect(releases.map((r) => r.version)).toEqual(["1.4.0"]);
    expect(releases[0]?.signerKeyIds).toHaveLength(2);
    const served = await fetch(releases[0]?.artifacts[0]?.url ?? "");
    expect(await served.text()).toBe(await readFile(join(dir, "agent-linux-amd64"), "utf8"));

    // One signature is not enough for this Control.
    const single = join(dir, "single.json");
    await agentctl([
      "release",
      "manifest",
      "--version",
      "1.5.0",
      "--sequence",
      "15",
      "--artifact",
      `linux-amd64=${join(dir, "agent-linux-amd64")}`,
      "--out",
      join(dir, "m2.json"),
    ]);
    await agentctl([
      "release",
      "sign",
      "--key",
      join(dir, "alice.key"),
      "--in",
      join(dir, "m2.json"),
      "--out",
      single,
    ]);
    const refused = await agentctl(["release", "register", single, "--artifacts", dir], env);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/insufficient_signatures/);
    expect(refused.stderr.trimEnd().split("\n")).toHaveLength(1);
  }, 120_000);
});
