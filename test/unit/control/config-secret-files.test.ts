/**
 * Every file Control reads a secret from is refused when other users may read or write it,
 * as the admin tokens file always was: a config file that carries admin tokens (or a database
 * password), and the TUF online keys. One line names the file and the fix (`chmod 600`).
 */
import { chmod, mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../../control/config.js";
import { generateKeyPair, serializePrivateKey } from "../../../control/shared/release/index.js";

function problemsOf(file: string): readonly string[] {
  try {
    loadConfig({ env: {}, file });
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
}

async function configFile(content: unknown, mode: number): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "agent-control-secret-files-"));
  const file = join(dir, "control.json");
  await writeFile(file, JSON.stringify(content));
  await chmod(file, mode);
  return file;
}

/** A TUF section whose online keys have `mode`. */
async function tufSection(mode: number) {
  const base = await mkdtemp(join(tmpdir(), "agent-control-tuf-keys-"));
  const dir = join(base, "repo");
  await mkdir(dir);
  await writeFile(join(dir, "root.json"), "{}");
  await writeFile(join(dir, "targets.json"), "{}");
  const section = {
    dir,
    snapshotKey: join(base, "snapshot.key"),
    timestampKey: join(base, "timestamp.key"),
  };
  for (const file of [section.snapshotKey, section.timestampKey]) {
    await writeFile(file, serializePrivateKey((await generateKeyPair()).privateKey));
    await chmod(file, mode);
  }
  return section;
}

const exposed = (label: string, file: string, mode: number, holds: string) =>
  `${label}: other users may read or write it (mode ${mode.toString(8)}); it holds ${holds}: chmod 600 ${file}`;

describe("files that hold secrets", () => {
  it.each([
    ["adminToken", { adminToken: "operator-token-0123456789" }],
    [
      "adminTokens with a plain token",
      { adminTokens: [{ name: "ci", role: "operator", token: "ci-token-0123456789" }] },
    ],
    ["a database password", { databaseUrl: "postgres://control:s3cret@db.internal/control" }],
  ])("refuses a config file other users may read that carries %s", async (_, content) => {
    for (const mode of [0o644, 0o640, 0o604]) {
      const file = await configFile(content, mode);
      expect(problemsOf(file)).toContain(exposed(`config file ${file}`, file, mode, "secrets"));
    }
    const safe = await configFile(content, 0o600);
    expect(problemsOf(safe).filter((p) => p.includes("other users"))).toEqual([]);
  });

  it("accepts a config file other users may read when it carries no secret", async () => {
    const file = await configFile(
      { adminTokens: [{ name: "ci", role: "operator", sha256: "a".repeat(64) }] },
      0o644,
    );
    expect(problemsOf(file).filter((p) => p.includes("other users"))).toEqual([]);
  });

  it("refuses TUF online keys other users may read, naming each key file", async () => {
    const tuf = await tufSection(0o644);
    const file = await configFile({ tuf }, 0o644);
    const problems = problemsOf(file);
    expect(problems).toContain(exposed("tuf.snapshotKey", tuf.snapshotKey, 0o644, "a private key"));
    expect(problems).toContain(
      exposed("tuf.timestampKey", tuf.timestampKey, 0o644, "a private key"),
    );
    const safe = await configFile({ tuf: await tufSection(0o600) }, 0o644);
    expect(problemsOf(safe).filter((p) => p.startsWith("tuf."))).toEqual([]);
  });
});
