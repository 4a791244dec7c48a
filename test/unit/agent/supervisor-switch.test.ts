/**
 * The supervisor's side of a supervisor update with real processes and a real install
 * directory, no Control: the release's artifact is a tiny script started as the supervisor
 * on trial, which crashes, or says the Agent was welcomed under it as a real supervisor on
 * trial relays it. And a supervisor on trial whose Agent fails writes nothing.
 */
import { existsSync } from "node:fs";
import { mkdtemp, readFile, readlink, rm, writeFile } from "node:fs/promises";
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
import { type SupervisorEnd, supervise } from "../../../agent/supervisor.js";
import { readSupervisorRecord } from "../../../agent/supervisor-dir.js";
import { OperationPhase } from "../../../proto/gen/agentcontrol/v1/agent_control_pb.js";

const WELCOMES = `process.send({ type: "welcomed", version: "1.0.0" }); setInterval(() => {}, 1000);`;
const CRASHES = "process.exit(3);";
/** A supervisor on trial as far as its parent can tell: it relays a Welcome, then runs on. */
const RELAYS = `import { writeFileSync } from "node:fs";
writeFileSync(process.env.PID_FILE, String(process.pid));
process.send({ type: "welcomed", version: "2.0.0" });
setInterval(() => {}, 1000);`;

const quiet: AgentLog = { info() {}, warn() {}, error() {}, debug() {} };
let dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  dirs = [];
});

/** An install dir at 1.0.0 switched to 2.0.0 by an upgrade on trial whose release carries its supervisor. */
async function onSupervisorTrial(release: string) {
  const root = await mkdtemp(join(tmpdir(), "agent-supervisor-switch-"));
  dirs.push(root);
  const paths = installPaths(root);
  await installVersion(paths, "1.0.0", new TextEncoder().encode(WELCOMES));
  await installVersion(paths, "2.0.0", new TextEncoder().encode(release));
  const state: AgentState = {
    nodeId: "n1",
    version: "2.0.0",
    previousVersion: "1.0.0",
    confirmedSequence: "10",
    installedSequence: "20",
    handled: { op2: { phase: OperationPhase.RESTARTING, version: "2.0.0", code: "", message: "" } },
    switch: {
      kind: "upgrade",
      opId: "op2",
      from: "1.0.0",
      to: "2.0.0",
      previousBefore: "",
      supervisor: true,
    },
  };
  await saveState(paths, state);
  await switchCurrent(paths, "2.0.0");
  return { root, paths };
}

/** Runs the supervisor (with updates on) until it ends or `done` holds, then stops it. */
async function superviseUntil(
  paths: ReturnType<typeof installPaths>,
  done: () => Promise<boolean>,
  role?: "trial",
): Promise<SupervisorEnd | "done"> {
  const stop = new AbortController();
  const started = Date.now();
  let ended: SupervisorEnd | undefined;
  const running = supervise({
    paths,
    childArgs: [],
    childEnv: {},
    startDeadlineMs: 8_000,
    log: quiet,
    signal: stop.signal,
    ...(role === undefined ? { update: { supervisorArgs: [] } } : { role }),
  }).then((end) => {
    ended = end;
    return end;
  });
  try {
    for (;;) {
      if (ended !== undefined) return ended;
      if (await done()) return "done";
      if (Date.now() - started > 30_000) throw new Error("the supervisor did not get there");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    stop.abort();
    await running;
  }
}

describe("a supervisor update, seen from the supervisor in use", () => {
  it("gives up a new supervisor that crashes: the pointer never moves, the Agent is reverted, supervisor_failed", async () => {
    const { root, paths } = await onSupervisorTrial(CRASHES);
    await superviseUntil(paths, async () => (await readCurrent(paths)) === "1.0.0");
    const state = await loadState(paths);
    expect(state?.switch).toBeUndefined();
    expect(state?.handled.op2).toMatchObject({
      phase: OperationPhase.FAILED,
      version: "1.0.0",
      code: "supervisor_failed",
    });
    expect(state?.handled.op2?.message).toMatch(
      /the supervisor of 2\.0\.0 exited \(code 3\) before the Agent was welcomed by Control; reverted to 1\.0\.0/,
    );
    expect(state?.pendingReport).toBe("op2");
    expect(state?.installedSequence).toBe("20");
    expect(existsSync(join(root, "supervisor"))).toBe(false);
    expect(existsSync(join(root, "supervisors", "2.0.0"))).toBe(false);
    expect(existsSync(join(root, "versions", "1.0.0", "agent.mjs"))).toBe(true);
    expect(await readSupervisorRecord(paths)).toEqual({
      failure: {
        version: "2.0.0",
        opId: "op2",
        code: "supervisor_failed",
        message: expect.stringMatching(/exited \(code 3\)/),
      },
    });
  });

  it("moves the pointer to a new supervisor that brought the Agent back, stops it and hands over", async () => {
    const { root, paths } = await onSupervisorTrial(RELAYS);
    const pidFile = join(root, "trial.pid");
    process.env.PID_FILE = pidFile;
    try {
      expect(await superviseUntil(paths, async () => false)).toBe("handover");
    } finally {
      delete process.env.PID_FILE;
    }
    expect(await readlink(join(root, "supervisor"))).toBe(join("supervisors", "2.0.0"));
    expect(await readFile(join(root, "supervisors", "2.0.0", "agent.mjs"), "utf8")).toBe(RELAYS);
    expect(await readSupervisorRecord(paths)).toEqual({ previous: "" });
    const pid = Number(await readFile(pidFile, "utf8"));
    expect(() => process.kill(pid, 0)).toThrow();
    // The Agent's files are the Agent's: the switch is still its to settle once welcomed.
    expect((await loadState(paths))?.switch?.to).toBe("2.0.0");
    expect(await readCurrent(paths)).toBe("2.0.0");
  });
});

describe("a supervisor record that cannot be trusted", () => {
  it("naming a version that is not a plain name, starts no update and deletes nothing", async () => {
    const { root, paths } = await onSupervisorTrial(CRASHES);
    const marker = join(root, "ran");
    const runs = `import { writeFileSync } from "node:fs"; writeFileSync(${JSON.stringify(marker)}, "ran"); setInterval(() => {}, 1000);`;
    await installVersion(paths, "2.0.0", new TextEncoder().encode(runs));
    const bad = JSON.stringify({ trial: { version: "../../etc", opId: "op2", from: "" } });
    await writeFile(paths.supervisorRecord, bad);
    await superviseUntil(paths, async () => existsSync(marker));
    expect(existsSync(join(root, "supervisors"))).toBe(false);
    expect(existsSync(join(root, "supervisor"))).toBe(false);
    expect(await readFile(paths.supervisorRecord, "utf8")).toBe(bad);
  });
});

describe("a supervisor on trial", () => {
  it("whose Agent crashes before its Welcome writes and deletes nothing, and stops", async () => {
    const { root, paths } = await onSupervisorTrial(CRASHES);
    const before = await readFile(paths.state, "utf8");
    expect(await superviseUntil(paths, async () => false, "trial")).toBe("stopped");
    expect(await readFile(paths.state, "utf8")).toBe(before);
    expect(await readCurrent(paths)).toBe("2.0.0");
    expect(existsSync(join(root, "versions", "2.0.0", "agent.mjs"))).toBe(true);
    expect(existsSync(join(root, "versions", "1.0.0", "agent.mjs"))).toBe(true);
    expect(existsSync(join(root, "supervisor.json"))).toBe(false);
  });
});
