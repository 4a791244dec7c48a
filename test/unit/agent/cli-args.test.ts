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
          clearText: true,
          downloadOrigins: [],
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

  it("uses TLS with the system roots towards a non-loopback server unless --insecure", () => {
    const remote = base().map((a) => (a === "127.0.0.1:7443" ? "control.example:7443" : a));
    const parsed = parseAgentArgs(["run", ...remote, "--join-token", "t"]);
    expect(parsed).toMatchObject({ ok: true, command: { options: { clearText: false } } });
    const insecure = parseAgentArgs(["run", ...remote, "--join-token", "t", "--insecure"]);
    expect(insecure).toMatchObject({ ok: true, command: { options: { clearText: true } } });
    const both = parseAgentArgs(["run", ...remote, "--insecure", "--ca", file]);
    expect(both).toMatchObject({ ok: false, message: expect.stringMatching(/--insecure.*--ca/) });
  });

  it("takes the download origins the node token may go to, as scheme, host and port", () => {
    const parsed = parseAgentArgs([
      "run",
      ...base(),
      "--download-origins",
      "http://127.0.0.1:7081,https://dl.example/",
    ]);
    expect(parsed).toMatchObject({
      ok: true,
      command: { options: { downloadOrigins: ["http://127.0.0.1:7081", "https://dl.example"] } },
    });
    for (const bad of ["ftp://x", "http://h/path", "nonsense"]) {
      const refused = parseAgentArgs(["run", ...base(), "--download-origins", bad]);
      expect(refused).toMatchObject({
        ok: false,
        message: expect.stringMatching(/--download-origins/),
      });
    }
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
