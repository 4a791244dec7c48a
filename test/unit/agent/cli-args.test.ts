import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_START_DEADLINE_MS, parseAgentArgs } from "../../../agent/cli-args.js";
import { makeKeys } from "../../helpers/releases.js";

let pin = "";
let dir = "";
let file = "";
beforeAll(async () => {
  const [key] = await makeKeys(1);
  pin = key?.pin ?? "";
  dir = await mkdtemp(join(tmpdir(), "agent-args-"));
  file = join(dir, "ca.pem");
  await writeFile(file, "pem");
});

const base = () => ["--install-dir", dir, "--server", "127.0.0.1:7443", "--pins", pin];

describe("the Agent's command line", () => {
  it("parses run with its defaults", () => {
    const parsed = parseAgentArgs(["run", ...base(), "--join-token", "t0k"]);
    expect(parsed).toMatchObject({
      ok: true,
      command: {
        kind: "run",
        options: {
          installDir: dir,
          server: "127.0.0.1:7443",
          joinToken: "t0k",
          pins: [pin],
          threshold: 1,
          tls: undefined,
          startDeadlineMs: DEFAULT_START_DEADLINE_MS,
        },
      },
    });
  });

  it("takes the join token from AGENT_JOIN_TOKEN and TLS files from --ca, --cert and --key", () => {
    const parsed = parseAgentArgs(["run", ...base(), "--ca", file, "--cert", file, "--key", file], {
      AGENT_JOIN_TOKEN: "from-env",
    });
    expect(parsed).toMatchObject({
      ok: true,
      command: { options: { joinToken: "from-env", tls: { ca: file, cert: file, key: file } } },
    });
  });

  it.each([
    [["run", "--server", "127.0.0.1:1", "--pins", "x"], /--install-dir DIR is required/],
    [
      ["run", "--install-dir", "/proc/version/x", "--server", "h:1"],
      /--install-dir .* is not a directory|cannot/,
    ],
    [["upgrade"], /unknown command "upgrade"/],
    [["run", "--bogus"], /bogus/],
  ])("refuses %j with one line", (argv, message) => {
    const parsed = parseAgentArgs(argv as string[]);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) {
      expect(parsed.message).toMatch(message);
      expect(parsed.message).not.toContain("\n");
    }
  });

  it.each([
    [["--server", "127.0.0.1:99999"], /--server must be HOST:PORT/],
    [["--threshold", "2"], /--threshold 2 is more than the 1 pins/],
    [["--cert", "CERT"], /--cert and --key go together/],
    [["--ca", "/nonexistent/ca.pem"], /--ca "\/nonexistent\/ca.pem" cannot be read/],
    [["--node-id=bad id"], /--node-id must start with a letter or digit/],
    [["--start-deadline-ms", "soon"], /--start-deadline-ms must be an integer/],
    [["--join-token", "a\nb"], /--join-token/],
  ])("refuses run with %j", (extra, message) => {
    const argv = ["run", ...base(), ...(extra as string[])];
    const parsed = parseAgentArgs(argv.map((a) => (a === "CERT" ? file : a)));
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.message).toMatch(message);
  });

  it("needs pins for run", () => {
    const parsed = parseAgentArgs(["run", "--install-dir", dir, "--server", "h:1"]);
    expect(parsed).toEqual({
      ok: false,
      message: "--pins is required: the release keys this node trusts",
    });
  });

  it("parses status with the install directory only", () => {
    expect(parseAgentArgs(["status", "--install-dir", dir])).toEqual({
      ok: true,
      command: { kind: "status", installDir: dir },
    });
    expect(parseAgentArgs(["status", "--install-dir", dir, "--server", "h:1"]).ok).toBe(false);
  });
});
