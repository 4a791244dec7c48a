/**
 * `agentctl release manifest --supervisor`: the signed manifest says the release also
 * updates the node's supervisor; without the flag the manifest has no such field.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseManifest } from "../../../control/shared/release/index.js";

const run = promisify(execFile);
const BIN = join(import.meta.dirname, "../../../cli/bin/agentctl.js");
let dir = "";

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "agentctl-supervisor-"));
  await writeFile(join(dir, "agent-linux-amd64"), "the agent and its supervisor");
});
afterAll(() => rm(dir, { recursive: true, force: true }));

async function manifest(out: string, extra: string[]): Promise<Uint8Array> {
  await run(
    process.execPath,
    [
      BIN,
      "release",
      "manifest",
      "--version",
      "2.0.0",
      "--sequence",
      "20",
      "--artifact",
      "linux-amd64=agent-linux-amd64",
      "--out",
      out,
      ...extra,
    ],
    { cwd: dir, env: { ...process.env, AGENTCTL_SERVER: "http://127.0.0.1:9", NO_COLOR: "1" } },
  );
  return new Uint8Array(await readFile(join(dir, out)));
}

describe("agentctl release manifest --supervisor", { timeout: 60_000 }, () => {
  it("writes supervisor: true into the manifest with the flag, and nothing without it", async () => {
    const [on, off] = await Promise.all([
      manifest("with.json", ["--supervisor"]),
      manifest("without.json", []),
    ]);
    expect(parseManifest(on).supervisor).toBe(true);
    expect(parseManifest(off).supervisor).toBeUndefined();
    expect(new TextDecoder().decode(off)).not.toContain("supervisor");
  });
});
