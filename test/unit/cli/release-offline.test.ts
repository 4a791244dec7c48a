/**
 * The offline release flow through the real `agentctl` binary: keygen, manifest, sign
 * by two keys, verify. No server is involved.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sha256Hex } from "../../../control/shared/release/index.js";

const BIN = join(import.meta.dirname, "../../../cli/bin/agentctl.js");

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

function agentctl(args: string[], cwd: string): Promise<Result> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      // An unreachable server: any attempt to contact one would fail the test.
      { cwd, env: { ...process.env, AGENTCTL_SERVER: "http://127.0.0.1:9", NO_COLOR: "1" } },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : -1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

let dir: string;
const pins: string[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "agentctl-release-"));
  await writeFile(join(dir, "agent-linux-amd64"), "amd64 agent binary");
  await writeFile(join(dir, "agent-linux-arm64"), "arm64 agent binary, a little longer");
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("offline release flow through the agentctl binary", { timeout: 120_000 }, () => {
  it("keygen writes a 0600 private key and a .pub pin, printing the pin", async () => {
    for (const name of ["k1", "k2", "k3"]) {
      const result = await agentctl(["release", "keygen", "--out", name], dir);
      expect(result.code).toBe(0);
      const pin = result.stdout.trim();
      expect(pin).toMatch(/^ed25519:[A-Za-z0-9_-]{43}$/);
      expect((await readFile(join(dir, `${name}.pub`), "utf8")).trim()).toBe(pin);
      expect((await stat(join(dir, name))).mode & 0o777).toBe(0o600);
      pins.push(pin);
    }
  });

  it("keygen refuses to overwrite a key", async () => {
    const result = await agentctl(["release", "keygen", "--out", "k1"], dir);
    expect(result).toEqual({
      code: 2,
      stdout: "",
      stderr: "agentctl: k1 already exists; pass --force to overwrite it\n",
    });
  });

  it("manifest records sha256, size and file name of each artifact", async () => {
    const result = await agentctl(
      [
        "release",
        "manifest",
        "--version",
        "1.4.0",
        "--sequence",
        "7",
        "--artifact",
        "linux-amd64=agent-linux-amd64",
        "--artifact",
        `linux-arm64=${join(dir, "agent-linux-arm64")}`,
        "--expires",
        "48h",
        "--out",
        "manifest.json",
      ],
      dir,
    );
    expect(result.code).toBe(0);
    const manifest = JSON.parse(await readFile(join(dir, "manifest.json"), "utf8")) as {
      version: string;
      sequence: number;
      expires: string;
      artifacts: Record<string, { sha256: string; size: number; file: string }>;
    };
    expect(manifest).toMatchObject({ product: "agent", version: "1.4.0", sequence: 7 });
    expect(manifest.artifacts["linux-amd64"]).toEqual({
      file: "agent-linux-amd64",
      sha256: sha256Hex(new TextEncoder().encode("amd64 agent binary")),
      size: 18,
    });
    expect(manifest.artifacts["linux-arm64"]?.file).toBe("agent-linux-arm64");
    const hours = (Date.parse(manifest.expires) - Date.now()) / 3_600_000;
    expect(hours).toBeGreaterThan(47.9);
    expect(hours).toBeLessThanOrEqual(48);
  });

  it("sign turns the manifest into an envelope, then adds a second signature", async () => {
    const first = await agentctl(
      ["release", "sign", "--key", "k1", "--in", "manifest.json", "--out", "release.json"],
      dir,
    );
    expect(first.code).toBe(0);
    const second = await agentctl(
      ["release", "sign", "--key", "k2", "--in", "release.json", "--out", "release.json", "--json"],
      dir,
    );
    expect(second.code).toBe(0);
    expect((JSON.parse(second.stdout) as { signatures: string[] }).signatures).toHaveLength(2);
    const envelope = JSON.parse(await readFile(join(dir, "release.json"), "utf8")) as {
      payloadType: string;
      payload: string;
      signatures: unknown[];
    };
    expect(envelope.signatures).toHaveLength(2);
    // The payload is the manifest file byte for byte, never a re-serialisation.
    expect(
      Buffer.from(envelope.payload, "base64").equals(await readFile(join(dir, "manifest.json"))),
    ).toBe(true);
  });

  it("verify with threshold 2 of the two signers passes with a summary", async () => {
    const result = await agentctl(
      [
        "release",
        "verify",
        "--pin",
        pins[0]!,
        "--pin",
        pins[1]!,
        "--threshold",
        "2",
        "release.json",
      ],
      dir,
    );
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /^OK: agent 1\.4\.0 sequence 7, .*2 valid signature\(s\).*threshold 2/,
    );
  });

  it("verify with threshold 3 fails with the reason when only two of three pinned keys signed", async () => {
    const result = await agentctl(
      [
        "release",
        "verify",
        "--pin",
        pins[0]!,
        "--pin",
        pins[1]!,
        "--pin",
        pins[2]!,
        "--threshold",
        "3",
        "release.json",
      ],
      dir,
    );
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/^agentctl: refused: .*\(insufficient_signatures\)\n$/);
  });

  it("verify refuses a threshold above the pins it was given", async () => {
    const result = await agentctl(
      [
        "release",
        "verify",
        "--pin",
        pins[0]!,
        "--pin",
        pins[1]!,
        "--threshold",
        "3",
        "release.json",
      ],
      dir,
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^agentctl: refused: .*\(bad_threshold\)\n$/);
  });

  it("verify refuses a tampered payload", async () => {
    const envelope = JSON.parse(await readFile(join(dir, "release.json"), "utf8")) as {
      payload: string;
    };
    const manifest = Buffer.from(envelope.payload, "base64")
      .toString()
      .replace('"1.4.0"', '"1.4.1"');
    envelope.payload = Buffer.from(manifest).toString("base64");
    await writeFile(join(dir, "tampered.json"), JSON.stringify(envelope));
    const result = await agentctl(["release", "verify", "--pin", pins[0]!, "tampered.json"], dir);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/\(insufficient_signatures\)\n$/);
  });
});
