import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseCliArgs } from "../../../agent-sim/cli-args.js";
import { generateKeyPair } from "../../../control/shared/release/index.js";

const [pinA, pinB] = [(await generateKeyPair()).pin, (await generateKeyPair()).pin];
const scratch = await mkdtemp(join(tmpdir(), "sim-cli-args-"));
const aFile = join(scratch, "a-file");
await writeFile(aFile, "");

function run(argv: string[]) {
  const parsed = parseCliArgs(argv);
  if (!parsed.ok) throw new Error(parsed.message);
  if (parsed.command.kind !== "run") throw new Error("expected run");
  return parsed.command;
}

describe("simulator flags", () => {
  it("maps every SPEC §7 flag to fleet options", () => {
    const command = run([
      "--count",
      "50",
      "--server",
      "10.0.0.1:7443",
      "--join-token",
      "J",
      "--seed",
      "7",
      "--labels",
      "region=eu, tier=web",
      "--platform",
      "linux-arm64",
      "--version",
      "1.2.0",
      "--restart-ms",
      "100-200",
      "--refuse-rate",
      "0.1",
      "--fail-rate",
      "0.05",
      "--no-return-rate",
      "0.01",
      "--revert-rate",
      "0.02",
      "--config-fail-rate",
      "0.03",
      "--offline-rate",
      "0.2",
      "--flap-rate",
      "0.1",
      "--no-upgrade-cap-rate",
      "0.04",
      "--silent-rate",
      "0.05",
      "--health-fail-rate",
      "0.06",
      "--defer-rate",
      "0.3",
      "--defer-chance",
      "0.25",
      "--fail-versions",
      "2.0.0,2.1.0",
      "--pins",
      `${pinA},${pinB}`,
      "--threshold",
      "2",
      "--state-dir",
      "/tmp/x",
      "--id-prefix",
      "edge",
      "--pool-count",
      "4",
      "--canary-count",
      "3",
      "--heartbeat-scale",
      "0.5",
      "--connect-rate",
      "100",
      "--no-download",
      "--log-level",
      "debug",
      "--status-every-ms",
      "0",
    ]);
    expect(command.logLevel).toBe("debug");
    expect(command.statusEveryMs).toBe(0);
    expect(command.options).toEqual({
      server: "10.0.0.1:7443",
      joinToken: "J",
      count: 50,
      seed: 7,
      labels: { region: "eu", tier: "web" },
      platform: "linux-arm64",
      version: "1.2.0",
      restartMs: [100, 200],
      rates: {
        refuse: 0.1,
        fail: 0.05,
        noReturn: 0.01,
        revert: 0.02,
        configFail: 0.03,
        offline: 0.2,
        flap: 0.1,
        noUpgradeCap: 0.04,
        silent: 0.05,
        healthFail: 0.06,
        defer: 0.3,
      },
      deferChance: 0.25,
      failVersions: ["2.0.0", "2.1.0"],
      pins: [pinA, pinB],
      threshold: 2,
      stateDir: "/tmp/x",
      idPrefix: "edge",
      poolCount: 4,
      canaryCount: 3,
      heartbeatScale: 0.5,
      connectRate: 100,
      download: false,
    });
  });

  it("has defaults for everything but the token, which may come from the environment", () => {
    const parsed = parseCliArgs([], { AGENT_SIM_JOIN_TOKEN: "from-env" });
    expect(parsed).toMatchObject({
      ok: true,
      command: {
        kind: "run",
        logLevel: "warn",
        statusEveryMs: 5000,
        options: { server: "127.0.0.1:7443", count: 1, joinToken: "from-env", download: true },
      },
    });
  });

  it("refuses a header-unsafe AGENT_SIM_JOIN_TOKEN, naming the variable and not the token", () => {
    const parsed = parseCliArgs([], { AGENT_SIM_JOIN_TOKEN: "secret\r\nx-evil: 1" });
    expect(parsed).toEqual({
      ok: false,
      message: "AGENT_SIM_JOIN_TOKEN must be printable ASCII without spaces or newlines",
    });
  });

  it("accepts a state dir it can create and the largest timer values", () => {
    const command = run([
      "--state-dir",
      join(scratch, "new", "deeper"),
      "--status-every-ms",
      "2147483647",
      "--restart-ms",
      "0-2147483647",
    ]);
    expect(command.options.stateDir).toBe(join(scratch, "new", "deeper"));
    expect(command.statusEveryMs).toBe(2_147_483_647);
  });

  it("answers --help", () => {
    expect(parseCliArgs(["--help"])).toEqual({ ok: true, command: { kind: "help" } });
  });

  it.each([
    [["--bogus"], /bogus/],
    [["--count"], /count/],
    [["--count", "0"], /--count must be an integer from 1 to 100000/],
    [["--count", "1.5"], /--count/],
    [["--count", "200000"], /count must be an integer from 1 to 100000/],
    [["--refuse-rate", "1.5"], /--refuse-rate must be a number from 0 to 1/],
    [["--flap-rate", "abc"], /--flap-rate/],
    [["--defer-rate", "2"], /^--defer-rate must be a number from 0 to 1, got "2"$/],
    [["--defer-chance", "1.5"], /^--defer-chance must be a number from 0 to 1, got "1.5"$/],
    [["--fail-rate", "0.6", "--health-fail-rate", "0.5"], /health-fail\) add up to 1.1/],
    [["--refuse-rate", "0.6", "--fail-rate", "0.6"], /add up to 1.2/],
    [["--restart-ms", "500-100"], /--restart-ms must be MIN-MAX/],
    [["--restart-ms", "fast"], /--restart-ms/],
    [["--labels", "novalue"], /--labels must be k=v/],
    [["--server", "nope"], /server must be HOST:PORT/],
    [["--heartbeat-scale", "0"], /--heartbeat-scale must be a number > 0/],
    [["--log-level", "loud"], /--log-level must be one of/],
    [["--pins", pinA!, "--threshold", "2"], /threshold 2 exceeds the 1 pins/],
    [["positional"], /positional/i],
    [
      ["--join-token", "abc\ndef"],
      /^--join-token must be printable ASCII without spaces or newlines$/,
    ],
    [["--join-token", "two words"], /^--join-token must be printable ASCII/],
    [["--join-token", "tok\u00e9n"], /^--join-token must be printable ASCII/],
    [["--join-token", ""], /^--join-token must be printable ASCII/],
    [["--server", "127.0.0.1:70000"], /^--server must be HOST:PORT with a port from 1 to 65535/],
    [["--server", "127.0.0.1:0"], /^--server must be HOST:PORT/],
    [["--server", ":7443"], /^--server must be HOST:PORT/],
    [["--count", "1e3"], /^--count must be an integer from 1 to 100000/],
    [["--seed", "-1"], /--seed/],
    [["--seed", "99999999999999999999"], /^--seed must be an integer ≥ 0/],
    [
      ["--status-every-ms", "9999999999"],
      /^--status-every-ms must be an integer from 0 to 2147483647/,
    ],
    [["--step-ms", "1.5"], /^--step-ms must be an integer/],
    [["--download-stall-ms", "0"], /^--download-stall-ms must be an integer from 1/],
    [["--restart-ms", "1-9999999999"], /^--restart-ms must be MIN-MAX milliseconds/],
    [["--heartbeat-scale", "1e9"], /^--heartbeat-scale must be a number > 0 and at most 1000/],
    [["--connect-rate", "NaN"], /^--connect-rate must be a number > 0/],
    [["--threshold", "0"], /^--threshold must be an integer from 1 to 1000/],
    [["--pins", "ed25519:a"], /^--pins: /],
    [["--pins", "rsa:abc"], /^--pins: /],
    [["--version", "v1"], /^--version must be a semantic version/],
    [["--fail-versions", "2.0.0,latest"], /^--fail-versions must be a semantic version.*"latest"/],
    [["--platform", "Linux AMD64"], /^--platform must look like linux-amd64/],
    [["--id-prefix=-sim"], /^--id-prefix must start with a letter or digit/],
    [["--id-prefix", "a b"], /^--id-prefix/],
    [["--id-prefix", "x".repeat(123)], /^--id-prefix .* at most 128 characters/],
    [["--state-dir", aFile], /^--state-dir ".*" is not a directory$/],
    [
      ["--state-dir", join(aFile, "sub")],
      /^--state-dir ".*" cannot be created: .* is not a directory$/,
    ],
    [["--no-download=yes"], /no-download/],
  ])("refuses %j with one line naming the problem", (argv, message) => {
    const parsed = parseCliArgs(argv);
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.message).toMatch(message);
    expect(parsed.message).not.toContain("\n");
  });
});
