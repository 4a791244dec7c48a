/**
 * Attack (a node bricked for good with releases that are already signed): a node goes 1.2 →
 * 1.3, neither confirmed. A hostile Control offers a signed "upgrade" back to 1.2 and never
 * welcomes it; the supervisor reverts to 1.3 and deleted `versions/1.2.0` while `previous`
 * still named it; an `AgentRollback` then pointed `current` at the deleted directory, and the
 * supervisor looped on "the installed version has no artifact" for ever, restarts included.
 *
 * Expected: no version a pointer names is ever deleted; a rollback to a version that is not
 * installed is refused (FAILED, one log line) and never applied; a supervisor that finds
 * `current` naming a missing artifact falls back to one that is installed.
 */
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type AgentState, loadState, saveState } from "../../../agent/agent-state.js";
import type { AgentLog } from "../../../agent/core/log.js";
import { deliverOperation } from "../../../agent/core/operations.js";
import {
  type InstallPaths,
  installPaths,
  installVersion,
  readCurrent,
  removeVersion,
  switchCurrent,
} from "../../../agent/install-dir.js";
import { realApplier } from "../../../agent/real-applier.js";
import { supervise } from "../../../agent/supervisor.js";
import { generateKeyPair } from "../../../control/shared/release/index.js";
import { OperationPhase } from "../../../proto/gen/agentcontrol/v1/agent_control_pb.js";
import { rollbackOp } from "../sim/release-fixture.js";
import { testAgentHost } from "./agent-host.js";

const WELCOMES = `process.send({ type: "welcomed", version: "good" }); setInterval(() => {}, 1000);`;
const HANGS = "setInterval(() => {}, 1000);";

interface Line {
  readonly level: string;
  readonly fields: object;
  readonly msg: string;
}
function recordingLog(): AgentLog & { lines: Line[] } {
  const lines: Line[] = [];
  const at =
    (level: string) =>
    (fields: object, msg: string): void => {
      lines.push({ level, fields, msg });
    };
  return { lines, info: at("info"), warn: at("warn"), error: at("error"), debug: at("debug") };
}

let dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  dirs = [];
});

async function installDir(versions: Record<string, string>): Promise<InstallPaths> {
  const root = await mkdtemp(join(tmpdir(), "agent-brick-"));
  dirs.push(root);
  const paths = installPaths(root);
  for (const [version, source] of Object.entries(versions)) {
    await installVersion(paths, version, new TextEncoder().encode(source));
  }
  return paths;
}

async function superviseUntil(
  paths: InstallPaths,
  deadlineMs: number,
  done: () => Promise<boolean>,
  log: AgentLog = recordingLog(),
): Promise<void> {
  const stop = new AbortController();
  const started = Date.now();
  const running = supervise({
    paths,
    childArgs: [],
    childEnv: {},
    startDeadlineMs: deadlineMs,
    log,
    signal: stop.signal,
  });
  try {
    for (;;) {
      if (await done()) return;
      if (Date.now() - started > 20_000) throw new Error("the supervisor did not get there");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    stop.abort();
    await running;
  }
}

describe("the supervisor never deletes a version a pointer names", () => {
  it("keeps versions/1.2.0 when it reverts an 'upgrade' back to 1.2.0 that previous still names", async () => {
    // 1.2 → 1.3 (unconfirmed, welcomed), then an offer of 1.2 again that is never welcomed.
    const paths = await installDir({ "1.2.0": HANGS, "1.3.0": WELCOMES });
    const state: AgentState = {
      nodeId: "n1",
      version: "1.2.0",
      previousVersion: "1.3.0",
      confirmedSequence: "0",
      handled: {
        back: { phase: OperationPhase.RESTARTING, version: "1.2.0", code: "", message: "" },
      },
      switch: {
        kind: "upgrade",
        opId: "back",
        from: "1.3.0",
        to: "1.2.0",
        previousBefore: "1.2.0",
      },
    };
    await saveState(paths, state);
    await switchCurrent(paths, "1.2.0");
    await superviseUntil(paths, 800, async () => (await readCurrent(paths)) === "1.3.0");
    const after = await loadState(paths);
    expect(after).toMatchObject({ version: "1.3.0", previousVersion: "1.2.0" });
    expect(after?.handled.back).toMatchObject({ phase: OperationPhase.FAILED });
    expect(existsSync(join(paths.versions, "1.2.0", "agent.mjs"))).toBe(true);
  });

  it("removeVersion leaves alone every version the state names, whatever the caller asks", async () => {
    const paths = await installDir({ "1.1.0": HANGS, "1.2.0": HANGS, "1.3.0": HANGS });
    await switchCurrent(paths, "1.3.0");
    await saveState(paths, {
      nodeId: "n1",
      version: "1.3.0",
      previousVersion: "1.2.0",
      confirmedSequence: "0",
      handled: {},
    });
    await removeVersion(paths, "1.2.0");
    await removeVersion(paths, "1.3.0");
    await removeVersion(paths, "1.1.0");
    expect(existsSync(join(paths.versions, "1.2.0"))).toBe(true);
    expect(existsSync(join(paths.versions, "1.3.0"))).toBe(true);
    expect(existsSync(join(paths.versions, "1.1.0"))).toBe(false);
  });
});

describe("a rollback to a version that is not installed", () => {
  it("is refused with a clear log line and reported as a failure, never applied", async () => {
    const paths = await installDir({ "1.3.0": WELCOMES });
    await switchCurrent(paths, "1.3.0");
    const state: AgentState = {
      nodeId: "n1",
      version: "1.3.0",
      previousVersion: "1.2.0",
      confirmedSequence: "0",
      handled: {},
    };
    await saveState(paths, state);
    const log = recordingLog();
    const applier = realApplier({ paths, state, log, persist: () => saveState(paths, state) });
    const failure = await applier.applyRollback("rb", "1.3.0", "1.2.0");
    expect(failure).toMatchObject({ code: "previous_version_missing" });
    expect(failure?.message).toMatch(/1\.2\.0 is not installed/);
    expect(await readCurrent(paths)).toBe("1.3.0");
    const saved = await loadState(paths);
    expect(saved).toMatchObject({ version: "1.3.0", previousVersion: "1.2.0" });
    expect(saved?.switch).toBeUndefined();
    expect(saved?.pendingReinstate).toBeUndefined();
    const refusals = log.lines.filter((l) => /not installed/.test(l.msg));
    expect(refusals).toHaveLength(1);
    expect(refusals[0]).toMatchObject({ level: "error", fields: { version: "1.2.0" } });
  });
});

describe("a supervisor whose current names a missing artifact", () => {
  it("falls back to the version the rollback came from and reports the rollback FAILED", async () => {
    // The install the attack left: current → versions/1.2.0, which is gone.
    const paths = await installDir({ "1.3.0": WELCOMES });
    const state: AgentState = {
      nodeId: "n1",
      version: "1.2.0",
      previousVersion: "1.3.0",
      confirmedSequence: "0",
      handled: {
        rb: { phase: OperationPhase.RESTARTING, version: "1.2.0", code: "", message: "" },
      },
      pendingReinstate: "rb",
      switch: { kind: "rollback", opId: "rb", from: "1.3.0", to: "1.2.0", previousBefore: "1.2.0" },
    };
    await saveState(paths, state);
    await switchCurrent(paths, "1.2.0");
    const log = recordingLog();
    await superviseUntil(paths, 60_000, async () => (await readCurrent(paths)) === "1.3.0", log);
    const after = await loadState(paths);
    expect(after?.version).toBe("1.3.0");
    expect(after?.switch).toBeUndefined();
    expect(after?.pendingReinstate).toBeUndefined();
    expect(after?.pendingReport).toBe("rb");
    expect(after?.handled.rb).toMatchObject({
      phase: OperationPhase.FAILED,
      version: "1.3.0",
      code: "previous_version_missing",
    });
    expect(existsSync(join(paths.versions, "1.3.0", "agent.mjs"))).toBe(true);
    expect(log.lines.some((l) => l.level === "error" && /falling back/.test(l.msg))).toBe(true);
  });

  it("falls back even once the rollback was settled (an install bricked by an older Agent)", async () => {
    const paths = await installDir({ "1.1.0": WELCOMES, "1.3.0": WELCOMES });
    await saveState(paths, {
      nodeId: "n1",
      version: "1.2.0",
      previousVersion: "1.3.0",
      confirmedSequence: "0",
      handled: {},
      pendingReinstate: "rb",
    });
    await switchCurrent(paths, "1.2.0");
    await superviseUntil(paths, 60_000, async () => (await readCurrent(paths)) === "1.3.0");
    const after = await loadState(paths);
    expect(after).toMatchObject({ version: "1.3.0", previousVersion: "" });
    expect(after?.pendingReinstate).toBeUndefined();
    expect(after?.handled.rb).toMatchObject({ code: "previous_version_missing" });
    expect(existsSync(join(paths.versions, "1.1.0"))).toBe(true);
  });

  it("falls back to another installed version when no pointer names one that exists", async () => {
    const paths = await installDir({ "1.1.0": WELCOMES });
    await saveState(paths, {
      nodeId: "n1",
      version: "1.2.0",
      previousVersion: "",
      confirmedSequence: "0",
      handled: {},
    });
    await switchCurrent(paths, "1.2.0");
    await superviseUntil(paths, 60_000, async () => (await readCurrent(paths)) === "1.1.0");
    expect((await loadState(paths))?.version).toBe("1.1.0");
  });
});

describe("an AgentRollback to a previous version that is not installed", () => {
  it("is answered FAILED previous_version_missing without ACCEPTED, and nothing moves", async () => {
    const key = await generateKeyPair();
    const agent = await testAgentHost({
      state: {
        nodeId: "n1",
        version: "1.3.0",
        previousVersion: "1.2.0",
        confirmedSequence: "0",
        handled: {},
      },
      installed: ["1.3.0"],
      pins: [key.pin],
    });
    dirs.push(agent.paths.root);
    await deliverOperation(agent.host, rollbackOp("rb", "1.2.0"));
    expect(agent.reports.map((r) => OperationPhase[r.report.phase])).toEqual(["FAILED"]);
    expect(agent.reports[0]?.report).toMatchObject({
      code: "previous_version_missing",
      version: "1.3.0",
    });
    expect(agent.restarts).toEqual([]);
    expect(await readCurrent(agent.paths)).toBe("1.3.0");
    expect(await loadState(agent.paths)).toMatchObject({
      version: "1.3.0",
      previousVersion: "1.2.0",
    });
  });
});
