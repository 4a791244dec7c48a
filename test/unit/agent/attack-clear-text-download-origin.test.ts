/**
 * Attack (clear text on the path): the Agent speaks TLS to a non-loopback Control unless
 * `--insecure`, but `--download-origins` takes `http://` origins off loopback without it. The
 * node token is sent with every download to those origins, so an Agent configured
 * `--server control.example:7443 --download-origins http://control.example:7081` (what a
 * plain-HTTP downloads listener invites) hands its node token to anyone on the path, with
 * no `--insecure` and no warning: the same clear text the stream refuses.
 *
 * Expected refusal: an `http://` download origin that is not loopback needs `--insecure`;
 * without it the command line is refused with one line naming `--download-origins`.
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { parseAgentArgs } from "../../../agent/cli-args.js";
import { makeKeys } from "../../helpers/releases.js";

let pin = "";
let dir = "";
beforeAll(async () => {
  const [key] = await makeKeys(1);
  pin = key?.pin ?? "";
  dir = await mkdtemp(join(tmpdir(), "attack-origins-"));
});

describe("a clear-text download origin off loopback", () => {
  const remote = () => [
    "run",
    "--install-dir",
    dir,
    "--server",
    "control.example:7443",
    "--pins",
    pin,
    "--join-token",
    "t0k",
  ];

  it("is refused without --insecure, as clear text to the stream is", () => {
    const parsed = parseAgentArgs([
      ...remote(),
      "--download-origins",
      "http://control.example:7081",
    ]);
    expect(parsed).toMatchObject({
      ok: false,
      message: expect.stringMatching(/--download-origins.*(--insecure|https)/),
    });
  });

  it("is still accepted on loopback and with --insecure", () => {
    const local = parseAgentArgs([...remote(), "--download-origins", "http://127.0.0.1:7081"]);
    expect(local).toMatchObject({ ok: true });
    const insecure = parseAgentArgs([
      ...remote(),
      "--insecure",
      "--download-origins",
      "http://control.example:7081",
    ]);
    expect(insecure).toMatchObject({ ok: true });
  });
});
