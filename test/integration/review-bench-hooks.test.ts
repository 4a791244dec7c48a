/**
 * Review of the benchmark hook's event-loop delay request (fc3823b, `agent-sim/bench/gc-hook.mjs`
 * and `agent-sim/bench/proc-stats.ts`): `eventLoopDelay` leaves its request in `<dir>/<name>.ask`
 * before it signals, and the hook takes the request from that file on whatever SIGUSR2 comes
 * next. A request whose signal never reached a hooked process is therefore answered later, in
 * place of another question.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { eventLoopDelay, hookPid, memorySnapshot } from "../../agent-sim/bench/proc-stats.js";
import { gcHookEnv } from "../../agent-sim/bench/processes.js";

/** An idle process under the hook (as the bench starts Control and the bare server). */
const MEASURED = "setInterval(() => {}, 1000);";

let dir = "";
const children: ChildProcess[] = [];

afterEach(async () => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  if (dir !== "") await rm(dir, { recursive: true, force: true });
  dir = "";
});

/** Starts the measured process as `name` under `dir`, as a (re)start of the same target does. */
async function startMeasured(name: string): Promise<{ child: ChildProcess; pid: number }> {
  await rm(join(dir, `${name}.pid`), { force: true });
  const child = spawn(process.execPath, ["-e", MEASURED], {
    env: { ...process.env, ...gcHookEnv(dir, name), AGENT_CONTROL_BENCH_ELD: "1" },
    stdio: "ignore",
  });
  children.push(child);
  return { child, pid: await hookPid(dir, name) };
}

describe("the benchmark hook's event-loop delay request under review", () => {
  it("answers a memory snapshot of a restarted target after a delay read of the one that died", async () => {
    dir = await mkdtemp(join(tmpdir(), "review-bench-hook-"));
    // The measured server dies (a crash, or the bench's kill) ...
    const first = await startMeasured("probe");
    const gone = new Promise<void>((r) => first.child.once("exit", () => r()));
    first.child.kill("SIGKILL");
    await gone;
    // ... and the delay read that ends a window reaches no process: it fails (ESRCH), but
    // its request file stays behind.
    await expect(eventLoopDelay(dir, "probe", first.pid)).rejects.toThrow();
    // The target is restarted on the same directory and name (target.restart, control.ts).
    const second = await startMeasured("probe");
    const outcome = await memorySnapshot(dir, "probe", second.pid).then(
      (snapshot) => ({ heapUsed: snapshot.heapUsed > 0, error: undefined }),
      (error: Error) => ({ heapUsed: false, error: error.message }),
    );
    const files = (await readdir(dir)).sort();
    // Expected: a memory snapshot (GC, mem.json). Found: the stale `.ask` turned the signal
    // into a delay read (eld.json, no GC), and memorySnapshot waited 30 s for a report that
    // never came.
    expect(outcome, `files under the bench dir: ${files.join(", ")}`).toEqual({
      heapUsed: true,
      error: undefined,
    });
  }, 45_000);
});
