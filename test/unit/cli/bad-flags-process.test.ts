/**
 * Every bad flag or environment value through the real `agentctl` binary: exit 2, exactly
 * one line on stderr naming what is wrong, nothing on stdout, and no connection made to the
 * server (a listener counts them), whatever the command would have done next.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAgentctl } from "../../../agent-sim/demo/agentctl.js";

let server: Server;
let serverUrl = "";
let connections = 0;
let dir = "";

beforeAll(async () => {
  server = createServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  serverUrl = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
  dir = await mkdtemp(join(tmpdir(), "agentctl-bad-flags-"));
  await writeFile(join(dir, "a-file"), "not a directory");
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

function agentctl(args: string[], env: Record<string, string> = {}) {
  return runAgentctl(args, {
    env: {
      PATH: process.env.PATH ?? "",
      NO_COLOR: "1",
      AGENTCTL_SERVER: serverUrl,
      AGENTCTL_TOKEN: "operator-token-0123456789",
      ...env,
    },
    timeoutMs: 60_000,
  });
}

describe("agentctl refuses bad flags before it does anything", { timeout: 120_000 }, () => {
  it.each<[string[], Record<string, string>, RegExp]>([
    [
      ["node", "list", "--token", "abc\ndef"],
      {},
      /^--token must be printable ASCII without spaces or newlines$/,
    ],
    [["node", "list"], { AGENTCTL_TOKEN: "tok en" }, /^AGENTCTL_TOKEN must be printable ASCII/],
    [["node", "list", "--token", ""], {}, /^--token must be printable ASCII/],
    [["node", "list", "--server", "ftp://x"], {}, /^invalid --server "ftp:\/\/x": use http/],
    [["node", "list"], { AGENTCTL_SERVER: "http://exa mple:7080" }, /^invalid AGENTCTL_SERVER /],
    // An offline command is checked all the same: the flags are wrong whatever runs.
    [["release", "keygen", "--out", "k", "--server", "::"], {}, /^invalid --server "::"/],
    [
      ["node", "list", "--page-size", "5000"],
      {},
      /^invalid value "5000" for --page-size: expected 1 to 1000$/,
    ],
    [
      ["node", "list", "--page-size", "ten"],
      {},
      /^invalid value "ten" for --page-size: expected a whole number$/,
    ],
    [["token", "create", "--ttl", "1d"], {}, /^invalid duration "1d" for --ttl/],
    [
      ["campaign", "plan", "--version", "1.0"],
      {},
      /^invalid --version "1.0": expected a semantic version/,
    ],
    [
      ["campaign", "plan", "--version", "1.0.0", "--batches", "5:1x"],
      {},
      /^invalid duration "1x" for --batches/,
    ],
    [["node", "list", "--bogus"], {}, /^unknown flag --bogus$/],
    [["node", "list", "--data-dir", ""], {}, /^--data-dir must name a directory$/],
    [
      ["release", "sign", "--key", "missing.key", "--in", "m.json", "--out", "e.json"],
      {},
      /^--key: missing.key does not exist \(ENOENT\)$/,
    ],
    [["release", "verify", "--pin", "ed25519:AAAA", "e.json"], {}, /^invalid --pin: /],
    [["release", "register", "missing.json"], {}, /^ENVELOPE: missing.json does not exist/],
    [
      [
        "release",
        "manifest",
        "--version",
        "1.0.0",
        "--sequence",
        "1",
        "--artifact",
        "linux-amd64=nope",
        "--out",
        "m.json",
      ],
      {},
      /^--artifact linux-amd64: nope does not exist/,
    ],
    [
      [
        "release",
        "manifest",
        "--version",
        "1.0.0",
        "--sequence",
        "1",
        "--artifact",
        "beos-ppc=x",
        "--out",
        "m.json",
      ],
      {},
      /^invalid --artifact "beos-ppc=x": platform beos-ppc is not one of/,
    ],
    [
      [
        "release",
        "manifest",
        "--version",
        "1.0.0",
        "--sequence",
        "1",
        "--artifact",
        "linux-amd64=x",
        "--url-base",
        "ftp://x",
        "--out",
        "m.json",
      ],
      {},
      /^invalid --url-base "ftp:\/\/x"/,
    ],
    [
      [
        "release",
        "manifest",
        "--version",
        "latest",
        "--sequence",
        "1",
        "--artifact",
        "linux-amd64=x",
        "--out",
        "m.json",
      ],
      {},
      /^invalid --version "latest"/,
    ],
  ])("agentctl %j (env %j) exits 2 with one line", async (args, env, message) => {
    const before = connections;
    const result = await agentctl(args, env);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/^agentctl: [^\n]*\n$/);
    expect(result.stderr.slice("agentctl: ".length, -1)).toMatch(message);
    expect(result.code).toBe(2);
    expect(connections).toBe(before);
  });

  it("names a register --artifacts that is not a directory", async () => {
    await writeFile(join(dir, "e.json"), "{}");
    const result = await agentctl([
      "release",
      "register",
      join(dir, "e.json"),
      "--artifacts",
      join(dir, "a-file"),
    ]);
    expect(result).toMatchObject({ code: 2, stdout: "" });
    expect(result.stderr).toBe(
      `agentctl: --artifacts: ${join(dir, "a-file")} is not a directory\n`,
    );
  });
});
