import { spawn } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { FakeControl } from "./fake-control.js";
import { eventually } from "./harness.js";

let control: FakeControl | undefined;

afterEach(async () => {
  await control?.stop();
  control = undefined;
});

function sim(args: string[]) {
  const child = spawn(process.execPath, ["--import", "tsx", "agent-sim/main.ts", ...args], {
    cwd: process.cwd(),
    env: { ...process.env, AGENT_SIM_JOIN_TOKEN: "" },
  });
  const out = { stdout: "", stderr: "" };
  child.stdout.on("data", (chunk: Buffer) => {
    out.stdout += chunk.toString();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    out.stderr += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, out, exited };
}

describe("npm run sim", () => {
  it("runs the fleet, prints status lines and stops cleanly on SIGTERM", async () => {
    control = await new FakeControl().start();
    const run = sim([
      "--count",
      "3",
      "--server",
      control.address,
      "--join-token",
      "join-secret",
      "--status-every-ms",
      "100",
    ]);
    await eventually(() => run.out.stdout.includes("welcomed 3"), 20_000, "status line");
    expect(run.out.stdout).toMatch(/agents 3 · connected 3 · welcomed 3 · upgrading 0/);
    run.child.kill("SIGTERM");
    expect(await run.exited).toBe(0);
    await eventually(() => control!.sessions.every((s) => s.endedAt !== undefined));
    expect(control.sessions).toHaveLength(3);
  });

  it("exits 2 with one line naming a bad flag", async () => {
    const run = sim(["--count", "many"]);
    expect(await run.exited).toBe(2);
    expect(run.out.stderr.trim().split("\n")).toHaveLength(1);
    expect(run.out.stderr).toContain("--count");
  });
});
