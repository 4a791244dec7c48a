/**
 * The Agent's health-check runner with real commands and a real HTTP server on loopback: a
 * passing round, a command's exit code and first lines, a timeout, an HTTP status and body,
 * a refused port, and rounds repeated for the stated period.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { firstLines, runHealthChecks } from "../../../agent/health-checks.js";
import type { HealthCheck, ReleaseHealth } from "../../../control/shared/release/index.js";

let server: Server;
let port = 0;
let hits = 0;
beforeAll(async () => {
  server = createServer((req, res) => {
    hits++;
    if (req.url === "/ok") res.writeHead(204).end();
    else res.writeHead(503).end("database unreachable\nretry later\n");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

const once = (...checks: HealthCheck[]): ReleaseHealth => ({
  checks,
  periodSeconds: 0,
  intervalSeconds: 1,
});
const sh = (name: string, script: string, timeoutSeconds = 10): HealthCheck => ({
  kind: "command",
  name,
  command: "/bin/sh",
  args: ["-c", script],
  timeoutSeconds,
  exitCode: 0,
});
const get = (name: string, path: string, at = port): HealthCheck => ({
  kind: "http",
  name,
  port: at,
  path,
  timeoutSeconds: 5,
});
const run = (health: ReleaseHealth) => runHealthChecks(health, new AbortController().signal);

describe("the Agent runs a release's health checks", () => {
  it("passes when every command exits as expected and every GET answers 2xx", async () => {
    expect(await run(once(sh("true", "exit 0"), get("api", "/ok")))).toEqual({ ok: true });
  });

  it("fails on a command's exit code, naming the check and its first lines of output", async () => {
    const verdict = await run(
      once(
        sh("first", "exit 0"),
        sh("disk", "echo one; echo two; echo 3; echo 4; echo 5; echo 6; exit 3"),
      ),
    );
    expect(verdict).toEqual({
      ok: false,
      message:
        'health check "disk" (/bin/sh -c echo one; echo two; echo 3; echo 4; echo 5; echo 6; exit 3) exited with code 3, expected 0: one | two | 3 | 4 | 5',
    });
  });

  it("keeps what a failing command writes to stderr", async () => {
    expect(await run(once(sh("lock", "echo held by backup >&2; exit 1")))).toMatchObject({
      ok: false,
      message: expect.stringMatching(/exited with code 1, expected 0: held by backup$/),
    });
  });

  it("fails a command that outlives its timeout", async () => {
    const started = Date.now();
    const verdict = await run(once(sh("slow", "echo waiting; sleep 30", 1)));
    expect(Date.now() - started).toBeLessThan(5000);
    expect(verdict).toMatchObject({
      ok: false,
      message: expect.stringMatching(/"slow" .* did not finish within 1 s: waiting$/),
    });
  });

  it("fails a command that cannot be run", async () => {
    const verdict = await run(
      once({
        kind: "command",
        name: "gone",
        command: "/no/such/program",
        args: [],
        timeoutSeconds: 5,
        exitCode: 0,
      }),
    );
    expect(verdict).toMatchObject({
      ok: false,
      message: expect.stringMatching(/"gone" \(\/no\/such\/program\) could not be run: .*ENOENT/),
    });
  });

  it("fails on an HTTP status outside 2xx with the body's first lines, and on a refused port", async () => {
    expect(await run(once(get("api", "/healthz")))).toEqual({
      ok: false,
      message: `health check "api" (GET http://127.0.0.1:${port}/healthz) answered status 503: database unreachable | retry later`,
    });
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const free = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    expect(await run(once(get("api", "/ok", free)))).toMatchObject({
      ok: false,
      message: expect.stringMatching(/GET http:\/\/127\.0\.0\.1:\d+\/ok\) failed: .*ECONNREFUSED/),
    });
  });

  it("repeats its rounds for the stated period", async () => {
    hits = 0;
    const started = Date.now();
    expect(
      await run({ checks: [get("api", "/ok")], periodSeconds: 2, intervalSeconds: 1 }),
    ).toEqual({ ok: true });
    expect(Date.now() - started).toBeGreaterThanOrEqual(2000);
    expect(hits).toBeGreaterThanOrEqual(3);
  });

  it("keeps at most five non-empty lines of output", () => {
    expect(firstLines("")).toBe("");
    expect(firstLines("\n a \n\nb\n")).toBe(": a | b");
    expect(firstLines("x".repeat(1000))).toHaveLength(2 + 400);
  });
});
