// `npm test`'s own set-up (npm runs it as `pretest`): the dashboard's browser tests need
// Debian's Chromium, the metrics and health-gate tests need Prometheus and promtool, and the
// test of the shipped systemd unit needs systemd-analyze (Debian's systemd package), at the
// paths the tests use. When all are there this prints nothing and takes milliseconds. When one
// is missing it installs Debian's packages where it can (as root, or through passwordless
// sudo, with apt-get on the PATH), running `apt-get update` only when the first install fails;
// otherwise, or when the install fails, it exits 1 at once with one line naming the command
// to run. The tests never skip for want of these programs.
//
// AGENT_CONTROL_PRETEST_BIN_DIR names another directory to look in than /usr/bin (the tests
// of this script use it; the test files themselves look in /usr/bin).
import { spawnSync } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";

/** The programs the tests run, and the Debian package that brings each. */
const REQUIRED = [
  { program: "chromium", pkg: "chromium" },
  { program: "prometheus", pkg: "prometheus" },
  { program: "promtool", pkg: "prometheus" },
  { program: "systemd-analyze", pkg: "systemd" },
];

const binDir = process.env.AGENT_CONTROL_PRETEST_BIN_DIR || "/usr/bin";

function executable(path) {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The first executable `name` on the PATH, or undefined. */
function onPath(name) {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (dir !== "" && executable(join(dir, name))) return join(dir, name);
  }
  return undefined;
}

const missing = () => REQUIRED.filter((r) => !executable(join(binDir, r.program)));

let absent = missing();
if (absent.length === 0) process.exit(0);

const packages = [...new Set(absent.map((r) => r.pkg))];
const names = absent.map((r) => join(binDir, r.program)).join(", ");
const installLine = `apt-get install -y --no-install-recommends ${packages.join(" ")}`;

/** Prints the one line and exits 1. */
function fail(why) {
  process.stderr.write(
    `npm test: ${names} missing${why}; install ${packages.length === 1 ? "it" : "them"} with: sudo ${installLine}\n`,
  );
  process.exit(1);
}

const aptGet = onPath("apt-get");
if (aptGet === undefined) fail(" and no apt-get on the PATH");
const asRoot = typeof process.getuid === "function" && process.getuid() === 0;
const sudo = asRoot ? undefined : onPath("sudo");
if (!asRoot) {
  if (sudo === undefined) fail(" and not running as root");
  const check = spawnSync(sudo, ["-n", "true"], { stdio: "ignore" });
  if (check.status !== 0) fail(" and sudo asks for a password");
}

const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
/** Runs apt-get with `args` (through `sudo -n` unless root); true when it exited 0. */
function apt(args) {
  const [command, argv] = asRoot ? [aptGet, args] : [sudo, ["-n", aptGet, ...args]];
  // apt's progress goes to stderr so that `npm test`'s stdout (a reporter's) stays clean.
  const result = spawnSync(command, argv, { stdio: ["ignore", 2, 2], env });
  return result.status === 0;
}

process.stderr.write(`npm test: ${names} missing; installing: ${installLine}\n`);
const install = ["install", "-y", "-q", "--no-install-recommends", ...packages];
const installed = apt(install) || (apt(["update", "-q"]) && apt(install));
absent = missing();
if (!installed || absent.length > 0)
  fail(installed ? " after apt-get install" : " (apt-get failed)");
