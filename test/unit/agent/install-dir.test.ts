/**
 * Artifacts of both kinds in a real install directory: the kind is told by the first bytes,
 * each kind gets its own file name and mode, and the supervisor finds what is installed.
 */
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  artifactKindOf,
  installedArtifact,
  installPaths,
  installVersion,
} from "../../../agent/install-dir.js";

const ELF = Uint8Array.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]);
const MACHO = Uint8Array.from([0xcf, 0xfa, 0xed, 0xfe, 7, 0, 0, 1]);
const text = (s: string) => new TextEncoder().encode(s);

let dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  dirs = [];
});

async function fresh() {
  const root = await mkdtemp(join(tmpdir(), "agent-install-"));
  dirs.push(root);
  return installPaths(root);
}

describe("the kind of an artifact", () => {
  it.each([
    ["an ELF binary", "executable", ELF],
    ["a Mach-O binary", "executable", MACHO],
    ["a PE binary", "executable", text("MZ\u0090\u0000")],
    ["a bundled ES module", "module", text('import{a}from"node:fs";')],
    ["a script with a shebang", "module", text("#!/usr/bin/env node\n")],
    ["three bytes of an ELF magic", "module", ELF.slice(0, 3)],
    ["nothing", "module", new Uint8Array()],
  ])("%s is installed as a %s", (_what, kind, bytes) => {
    expect(artifactKindOf(bytes)).toBe(kind);
  });
});

describe("installing a version", () => {
  it("writes an executable as versions/<v>/agent, executable by its owner only", async () => {
    const paths = await fresh();
    expect(await installVersion(paths, "1.0.0", ELF)).toBe("executable");
    const file = join(paths.versions, "1.0.0", "agent");
    expect((await stat(file)).mode & 0o777).toBe(0o700);
    expect(await readFile(file)).toEqual(Buffer.from(ELF));
    expect(await installedArtifact(paths, "1.0.0")).toEqual({ kind: "executable", path: file });
  });

  it("writes a module as versions/<v>/agent.mjs, readable by its owner only", async () => {
    const paths = await fresh();
    expect(await installVersion(paths, "1.0.0", text("export {};"))).toBe("module");
    const file = join(paths.versions, "1.0.0", "agent.mjs");
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await installedArtifact(paths, "1.0.0")).toEqual({ kind: "module", path: file });
  });

  it("keeps one artifact per version when the same version is installed as the other kind", async () => {
    const paths = await fresh();
    await installVersion(paths, "1.0.0", ELF);
    await installVersion(paths, "1.0.0", text("export {};"));
    expect(existsSync(join(paths.versions, "1.0.0", "agent"))).toBe(false);
    expect((await installedArtifact(paths, "1.0.0"))?.kind).toBe("module");
    await installVersion(paths, "1.0.0", ELF);
    expect(existsSync(join(paths.versions, "1.0.0", "agent.mjs"))).toBe(false);
    expect((await installedArtifact(paths, "1.0.0"))?.kind).toBe("executable");
  });

  it("finds no artifact for a version that is not installed", async () => {
    expect(await installedArtifact(await fresh(), "9.9.9")).toBeUndefined();
  });
});
