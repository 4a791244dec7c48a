/**
 * The benchmark's `--sims-nice N` (`agent-sim/bench/processes.ts`): a simulator process, every
 * thread of it, runs at the niceness asked for, and the measured server's priority is not
 * touched; a niceness out of range is refused with the variable's name.
 */
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { getPriority, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  SIM_NICE_ENV,
  type SimProcess,
  simulatorNiceness,
  startSimProcess,
} from "../../agent-sim/bench/processes.js";

/** The niceness of each thread of `pid` (field 19 of /proc/<pid>/task/<tid>/stat). */
async function threadNiceness(pid: number): Promise<number[]> {
  const tids = await readdir(`/proc/${pid}/task`);
  return Promise.all(
    tids.map(async (tid) => {
      const stat = await readFile(`/proc/${pid}/task/${tid}/stat`, "utf8");
      // Fields after the command name (which may hold spaces) start at field 3.
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      return Number(fields[19 - 3]);
    }),
  );
}

const saved = process.env[SIM_NICE_ENV];
let sim: SimProcess | undefined;
let dir = "";

afterEach(async () => {
  await sim?.stop();
  sim = undefined;
  if (saved === undefined) delete process.env[SIM_NICE_ENV];
  else process.env[SIM_NICE_ENV] = saved;
  if (dir !== "") await rm(dir, { recursive: true, force: true });
});

describe("the simulators' niceness in the benchmark", () => {
  it("runs every thread of a simulator process at the niceness asked for", async () => {
    process.env[SIM_NICE_ENV] = "10";
    const ours = getPriority();
    dir = await mkdtemp(join(tmpdir(), "bench-nice-"));
    // No server listens there: the agents back off; only the process matters here.
    sim = await startSimProcess(
      { server: "127.0.0.1:9", joinToken: "ajt.none.none", count: 1, seed: 1, idPrefix: "nice" },
      join(dir, "sim.log"),
    );
    const pid = sim.child.pid as number;
    const nice = await threadNiceness(pid);
    expect(nice.length).toBeGreaterThan(1);
    expect(new Set(nice)).toEqual(new Set([10]));
    expect(getPriority()).toBe(ours);
  });

  it("reads 0 when unset, and refuses a niceness out of range", () => {
    delete process.env[SIM_NICE_ENV];
    expect(simulatorNiceness()).toBe(0);
    process.env[SIM_NICE_ENV] = "20";
    expect(() => simulatorNiceness()).toThrow(
      `${SIM_NICE_ENV} must be a whole number from 0 to 19`,
    );
    process.env[SIM_NICE_ENV] = "-5";
    expect(() => simulatorNiceness()).toThrow(SIM_NICE_ENV);
  });
});
