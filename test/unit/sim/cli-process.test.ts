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

  it.each([
    [["--count", "many"], "--count"],
    // The case: a token no header can carry crashed every agent loop, then idled.
    [["--join-token", "join\nsecret"], "--join-token must be printable ASCII without spaces"],
    [["--server", "127.0.0.1:99999"], "--server must be HOST:PORT"],
    [["--restart-ms", "100-fast"], "--restart-ms must be MIN-MAX"],
    [["--status-every-ms", "99999999999"], "--status-every-ms must be an integer"],
    [["--state-dir", "/proc/version/state"], "--state-dir"],
    [["--pins", "ed25519:nope"], "--pins"],
    [["--bogus", "1"], "--bogus"],
  ])("%j exits 2 with one line naming the flag, before any agent starts", async (args, named) => {
    const run = sim(["--count", "2", "--server", "127.0.0.1:1", "--join-token", "ok", ...args]);
    expect(await run.exited).toBe(2);
    expect(run.out.stderr).toMatch(/^agent-sim: [^\n]+\n$/);
    expect(run.out.stderr).toContain(named);
    expect(run.out.stderr).not.toContain("secret");
    expect(run.out.stdout).toBe("");
  });
});
