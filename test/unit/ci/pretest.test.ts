/**
 * `npm test`'s pretest script, run as a real process in a sandbox: a bin directory in a temp
 * dir stands for /usr/bin, and a PATH of fake `apt-get` and `sudo` scripts records what would
 * have been run. Nothing is installed or uninstalled on this machine.
 */
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

const SCRIPT = resolve(import.meta.dirname, "..", "..", "..", ".ci", "pretest.mjs");
const PROGRAMS = ["chromium", "prometheus", "promtool", "systemd-analyze"];

let root: string;
let binDir: string;
let toolsDir: string;
let log: string;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "pretest-"));
  binDir = join(root, "bin");
  toolsDir = join(root, "tools");
  log = join(root, "calls.log");
  mkdirSync(binDir);
  mkdirSync(toolsDir);
});

afterEach(() => rmSync(root, { recursive: true, force: true }));

function program(dir: string, name: string, body = "exit 0"): void {
  writeFileSync(join(dir, name), `#!/bin/sh\n${body}\n`);
  chmodSync(join(dir, name), 0o755);
}

/**
 * A fake apt-get that logs its arguments; `install` fails `installFailures` times (a stale
 * package list), then puts every program into the bin dir, unless `neverProvides`.
 */
function fakeAptGet(options: { installFailures?: number; neverProvides?: boolean } = {}): void {
  const failures = options.installFailures ?? 0;
  const provide = options.neverProvides
    ? ""
    : PROGRAMS.map(
        (p) => `printf '#!/bin/sh\\n' > "${binDir}/${p}"; /bin/chmod 755 "${binDir}/${p}"`,
      ).join("; ");
  program(
    toolsDir,
    "apt-get",
    [
      `echo "apt-get $* DEBIAN_FRONTEND=$DEBIAN_FRONTEND" >> "${log}"`,
      `[ "$1" = install ] || exit 0`,
      `n=$(/bin/cat "${root}/failures" 2>/dev/null || echo 0)`,
      `if [ "$n" -lt ${failures} ]; then echo $((n + 1)) > "${root}/failures"; exit 100; fi`,
      provide,
      "exit 0",
    ].join("\n"),
  );
}

/** A fake sudo that logs and runs its command (after `-n`), as passwordless sudo would. */
function fakeSudo(): void {
  program(toolsDir, "sudo", `[ "$1" = -n ] && shift\necho "sudo" >> "${log}"\nexec "$@"`);
}

function pretest(): { code: number | null; stderr: string; calls: string[] } {
  const result = spawnSync(process.execPath, [SCRIPT], {
    env: { PATH: toolsDir, AGENT_CONTROL_PRETEST_BIN_DIR: binDir },
    encoding: "utf8",
  });
  const calls = existsSync(log)
    ? readFileSync(log, "utf8")
        .trim()
        .split("\n")
        .filter((l) => l.startsWith("apt-get"))
    : [];
  return { code: result.status, stderr: result.stderr, calls };
}

describe("npm test's pretest script", () => {
  it("does nothing and prints nothing when every program is there", () => {
    for (const p of PROGRAMS) program(binDir, p);
    fakeAptGet();
    const result = pretest();
    expect(result).toEqual({ code: 0, stderr: "", calls: [] });
  });

  it("installs only the missing package with apt-get, without an update when it works", () => {
    program(binDir, "chromium");
    program(binDir, "systemd-analyze");
    fakeAptGet();
    fakeSudo();
    const result = pretest();
    expect(result.code).toBe(0);
    expect(result.calls).toEqual([
      "apt-get install -y -q --no-install-recommends prometheus DEBIAN_FRONTEND=noninteractive",
    ]);
    for (const p of PROGRAMS) expect(existsSync(join(binDir, p))).toBe(true);
  });

  it("runs apt-get update and installs again when the first install fails", () => {
    fakeAptGet({ installFailures: 1 });
    fakeSudo();
    const result = pretest();
    expect(result.code).toBe(0);
    expect(result.calls).toEqual([
      "apt-get install -y -q --no-install-recommends chromium prometheus systemd DEBIAN_FRONTEND=noninteractive",
      "apt-get update -q DEBIAN_FRONTEND=noninteractive",
      "apt-get install -y -q --no-install-recommends chromium prometheus systemd DEBIAN_FRONTEND=noninteractive",
    ]);
  });

  it("fails at once with one line naming the command when there is no apt-get", () => {
    program(binDir, "prometheus");
    program(binDir, "promtool");
    program(binDir, "systemd-analyze");
    const result = pretest();
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `npm test: ${join(binDir, "chromium")} missing and no apt-get on the PATH; install it with: sudo apt-get install -y --no-install-recommends chromium\n`,
    );
  });

  it("fails with one line naming the command when apt-get cannot install", () => {
    fakeAptGet({ installFailures: 9 });
    fakeSudo();
    const result = pretest();
    expect(result.code).toBe(1);
    expect(result.calls).toHaveLength(3);
    expect(result.stderr.trimEnd().split("\n").at(-1)).toBe(
      `npm test: ${join(binDir, "chromium")}, ${join(binDir, "prometheus")}, ${join(binDir, "promtool")}, ${join(binDir, "systemd-analyze")} missing (apt-get failed); install them with: sudo apt-get install -y --no-install-recommends chromium prometheus systemd`,
    );
  });

  it("fails when apt-get succeeds but a program is still missing", () => {
    fakeAptGet({ neverProvides: true });
    fakeSudo();
    const result = pretest();
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/missing after apt-get install; install them with: sudo apt-get/);
  });
});
