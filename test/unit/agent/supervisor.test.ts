/**
 * The supervisor with real child processes and a real install directory, no Control: the
 * artifacts are tiny scripts that crash, hang, ask for a restart or report a Welcome over
 * the IPC channel as the Agent does.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type AgentState, loadState, saveState } from "../../../agent/agent-state.js";
import type { AgentLog } from "../../../agent/core/log.js";
import {
  installPaths,
  installVersion,
  readCurrent,
  switchCurrent,
} from "../../../agent/install-dir.js";
import { supervise } from "../../../agent/supervisor.js";
import { OperationPhase } from "../../../proto/gen/agentcontrol/v1/agent_control_pb.js";

const WELCOMES = `process.send({ type: "welcomed", version: "good" }); setInterval(() => {}, 1000);`;
const HANGS = "setInterval(() => {}, 1000);";
const GARBAGE = "this is not JavaScript }{";

const quiet: AgentLog = { info() {}, warn() {}, error() {}, debug() {} };
let dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  dirs = [];
});

/** An install dir at `good`, switched to `bad` by an upgrade on trial (as the applier leaves it). */
async function onTrial(bad: string) {
  const root = await mkdtemp(join(tmpdir(), "agent-supervisor-"));
  dirs.push(root);
  const paths = installPaths(root);
  await installVersion(paths, "1.0.0", new TextEncoder().encode(WELCOMES));
  await installVersion(paths, "2.0.0", new TextEncoder().encode(bad));
  const state: AgentState = {
    nodeId: "n1",
    version: "2.0.0",
    previousVersion: "1.0.0",
    confirmedSequence: "10",
    handled: { op1: { phase: OperationPhase.RESTARTING, version: "2.0.0", code: "", message: "" } },
    switch: { kind: "upgrade", opId: "op1", from: "1.0.0", to: "2.0.0", previousBefore: "" },
  };
  await saveState(paths, state);
  await switchCurrent(paths, "2.0.0");
  return paths;
}

/** Runs the supervisor until `done` holds (checked every 50 ms), then stops it. */
async function superviseUntil(
  paths: ReturnType<typeof installPaths>,
  deadlineMs: number,
  done: () => Promise<boolean>,
  moduleRunner?: string,
): Promise<number> {
  const stop = new AbortController();
  const started = Date.now();
  const running = supervise({
    paths,
    childArgs: [],
    childEnv: {},
    startDeadlineMs: deadlineMs,
    log: quiet,
    signal: stop.signal,
    ...(moduleRunner !== undefined ? { moduleRunner } : {}),
  });
  try {
    for (;;) {
      if (await done()) return Date.now() - started;
      if (Date.now() - started > 20_000) throw new Error("the supervisor did not get there");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    stop.abort();
    await running;
  }
}

describe("the supervisor protects the node from a new version", () => {
  it("reverts a version that crashes at start, and records start_failed for its operation", async () => {
    const paths = await onTrial(GARBAGE);
    await superviseUntil(paths, 60_000, async () => (await readCurrent(paths)) === "1.0.0");
    const state = await loadState(paths);
    expect(state?.version).toBe("1.0.0");
    expect(state?.previousVersion).toBe("");
    expect(state?.switch).toBeUndefined();
    expect(state?.pendingReport).toBe("op1");
    expect(state?.handled.op1).toMatchObject({
      phase: OperationPhase.FAILED,
      version: "1.0.0",
      code: "start_failed",
    });
    expect(state?.handled.op1?.message).toMatch(
      /2\.0\.0 exited \(code 1\) before Control welcomed it/,
    );
  });

  it("reverts a version that fails its release's health checks, with health_check_failed and the check's message", async () => {
    const paths = await onTrial(HANGS);
    const failing = `import { readFileSync, writeFileSync } from "node:fs";
const file = ${JSON.stringify(paths.state)};
const state = JSON.parse(readFileSync(file, "utf8"));
state.healthFailure = { opId: "op1", message: 'health check "api" (GET http://127.0.0.1:8080/) answered status 503' };
writeFileSync(file, JSON.stringify(state));
process.exit(76);`;
    await installVersion(paths, "2.0.0", new TextEncoder().encode(failing));
    await superviseUntil(paths, 60_000, async () => (await readCurrent(paths)) === "1.0.0");
    const state = await loadState(paths);
    expect(state?.healthFailure).toBeUndefined();
    expect(state?.switch).toBeUndefined();
    expect(state?.pendingReport).toBe("op1");
    expect(state?.handled.op1).toEqual({
      phase: OperationPhase.FAILED,
      version: "1.0.0",
      code: "health_check_failed",
      message:
        '2.0.0 failed health check "api" (GET http://127.0.0.1:8080/) answered status 503; reverted to 1.0.0',
    });
  });

  it("gives a version on trial the time of its health checks on top of the start deadline", async () => {
    const paths = await onTrial(HANGS);
    const state = await loadState(paths);
    if (state?.switch === undefined) throw new Error("no switch");
    state.switch = {
      ...state.switch,
      health: {
        checks: [{ kind: "http", name: "api", port: 8080, path: "/", timeoutSeconds: 1 }],
        periodSeconds: 2,
        intervalSeconds: 1,
      },
    };
    await saveState(paths, state);
    const took = await superviseUntil(
      paths,
      500,
      async () => (await readCurrent(paths)) === "1.0.0",
    );
    expect(took).toBeGreaterThanOrEqual(4500);
    expect((await loadState(paths))?.handled.op1?.message).toMatch(
      /not welcomed by Control within 4500 ms/,
    );
  });

  it("reverts a version that runs but is not welcomed within the deadline", async () => {
    const paths = await onTrial(HANGS);
    const took = await superviseUntil(
      paths,
      1500,
      async () => (await readCurrent(paths)) === "1.0.0",
    );
    expect(took).toBeGreaterThanOrEqual(1500);
    const state = await loadState(paths);
    expect(state?.handled.op1?.message).toMatch(/not welcomed by Control within 1500 ms/);
  });

  it("keeps a version that is welcomed in time", async () => {
    const paths = await onTrial(WELCOMES);
    // Past the deadline: a welcomed version is never reverted afterwards.
    const since = Date.now();
    await superviseUntil(paths, 3000, async () => Date.now() - since > 4000);
    expect(await readCurrent(paths)).toBe("2.0.0");
  });

  it("starts the version current points at again when it asks for a restart", async () => {
    const paths = await onTrial(WELCOMES);
    const state = await loadState(paths);
    if (state === undefined) throw new Error("no state");
    delete state.switch;
    await saveState(paths, state);
    const counter = join(paths.root, "starts");
    await installVersion(
      paths,
      "2.0.0",
      new TextEncoder().encode(
        `import { appendFileSync } from "node:fs"; appendFileSync(${JSON.stringify(counter)}, "x"); process.exit(75);`,
      ),
    );
    await writeFile(counter, "");
    await superviseUntil(paths, 700, async () => (await readFile(counter, "utf8")).length >= 3);
    expect(await readCurrent(paths)).toBe("2.0.0");
  });

  it("reverts a module version whose Node.js cannot be started, and says why", async () => {
    const paths = await onTrial(WELCOMES);
    await superviseUntil(
      paths,
      60_000,
      async () => (await readCurrent(paths)) === "1.0.0",
      join(paths.root, "no-such-node"),
    );
    const state = await loadState(paths);
    expect(state?.handled.op1).toMatchObject({ code: "start_failed", version: "1.0.0" });
    expect(state?.handled.op1?.message).toMatch(/2\.0\.0 could not be started: .*ENOENT/);
  });
});

describe("the supervisor starts each kind of artifact its own way", () => {
  it("runs a version installed as an executable directly, without Node.js", async () => {
    const paths = await onTrial(WELCOMES);
    const state = await loadState(paths);
    if (state === undefined) throw new Error("no state");
    delete state.switch;
    await saveState(paths, state);
    const seen = join(paths.root, "seen");
    await writeFile(seen, "");
    await writeFile(
      join(paths.versions, "2.0.0", "agent"),
      `#!/bin/sh\necho "$0" >> ${JSON.stringify(seen)}\nexit 75\n`,
      { mode: 0o700 },
    );
    await superviseUntil(
      paths,
      700,
      async () => (await readFile(seen, "utf8")).split("\n").length > 2,
      join(paths.root, "no-such-node"),
    );
    const lines = (await readFile(seen, "utf8")).trim().split("\n");
    expect(new Set(lines)).toEqual(new Set([join(paths.versions, "2.0.0", "agent")]));
    expect(await readCurrent(paths)).toBe("2.0.0");
  });

  it("runs a version installed as a module with the configured Node.js", async () => {
    const paths = await onTrial(WELCOMES);
    const seen = join(paths.root, "seen");
    await writeFile(seen, "");
    const runner = join(paths.root, "fake-node");
    await writeFile(
      runner,
      `#!/bin/sh\necho "$1" >> ${JSON.stringify(seen)}\nexec ${JSON.stringify(process.execPath)} "$@"\n`,
      { mode: 0o700 },
    );
    const since = Date.now();
    await superviseUntil(paths, 3000, async () => Date.now() - since > 3500, runner);
    expect(await readCurrent(paths)).toBe("2.0.0");
    expect((await readFile(seen, "utf8")).trim()).toBe(join(paths.versions, "2.0.0", "agent.mjs"));
  });
});
