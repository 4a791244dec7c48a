/**
 * The launcher (the program the service starts) with real processes and a real install
 * directory: it runs the supervisor the pointer names and passes its exit code up, and it
 * supervises itself when the pointer names nothing installed or a supervisor that fails at
 * start; it never moves the pointer or deletes anything.
 */
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readlink, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { AgentLog } from "../../../agent/core/log.js";
import { installPaths } from "../../../agent/install-dir.js";
import { moveSupervisorPointer } from "../../../agent/supervisor-dir.js";
import { HANDOVER_EXIT_CODE, runPointedSupervisor } from "../../../agent/supervisor-launch.js";

const lines: string[] = [];
const log: AgentLog = {
  info: (_f, m) => void lines.push(m),
  warn: (_f, m) => void lines.push(m),
  error: (_f, m) => void lines.push(m),
  debug() {},
};
let dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  dirs = [];
  lines.length = 0;
});

/** An install dir whose pointer names supervisor 2.0.0 with `script` as its module (none when undefined). */
async function pointingAt(script: string | undefined) {
  const root = await mkdtemp(join(tmpdir(), "agent-launch-"));
  dirs.push(root);
  const paths = installPaths(root);
  if (script !== undefined) {
    await mkdir(join(paths.supervisors, "2.0.0"), { recursive: true });
    await writeFile(join(paths.supervisors, "2.0.0", "agent.mjs"), script);
  }
  await moveSupervisorPointer(paths, "2.0.0");
  return paths;
}

const launch = (paths: ReturnType<typeof installPaths>) =>
  runPointedSupervisor({
    paths,
    args: ["run"],
    moduleRunner: process.execPath,
    log,
    signal: new AbortController().signal,
  });

describe("the launcher", () => {
  it("runs the supervisor the pointer names and passes its handover up", async () => {
    const paths = await pointingAt(`process.exit(${HANDOVER_EXIT_CODE});`);
    expect(await launch(paths)).toBe(HANDOVER_EXIT_CODE);
  });

  it("passes a clean stop of the supervisor in use up", async () => {
    const paths = await pointingAt("process.exit(0);");
    expect(await launch(paths)).toBe(0);
  });

  it("supervises itself when the supervisor in use fails at start, and keeps the pointer and its files", async () => {
    const paths = await pointingAt("process.exit(3);");
    expect(await launch(paths)).toBeUndefined();
    expect(lines).toContain("the supervisor in use failed at start; supervising with this one");
    expect(await readlink(paths.supervisor)).toBe(join("supervisors", "2.0.0"));
    expect(existsSync(join(paths.supervisors, "2.0.0", "agent.mjs"))).toBe(true);
  });

  it("supervises itself when the pointer names no installed supervisor", async () => {
    const paths = await pointingAt(undefined);
    expect(await launch(paths)).toBeUndefined();
    expect(lines).toContain(
      "the supervisor pointer names no installed supervisor; supervising with this one",
    );
    expect(await readlink(paths.supervisor)).toBe(join("supervisors", "2.0.0"));
  });

  it("supervises itself when there is no pointer", async () => {
    const root = await mkdtemp(join(tmpdir(), "agent-launch-"));
    dirs.push(root);
    expect(await launch(installPaths(root))).toBeUndefined();
  });
});
