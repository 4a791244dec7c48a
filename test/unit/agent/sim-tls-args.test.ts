import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseCliArgs } from "../../../agent-sim/cli-args.js";

describe("agent-sim's TLS flags", () => {
  it("reads --ca, --cert and --key into the fleet's TLS options", async () => {
    const dir = await mkdtemp(join(tmpdir(), "sim-tls-"));
    const file = join(dir, "x.pem");
    await writeFile(file, "PEM");
    const parsed = parseCliArgs(["--ca", file, "--cert", file, "--key", file]);
    expect(parsed.ok).toBe(true);
    if (parsed.ok && parsed.command.kind === "run") {
      const tls = parsed.command.options.tls;
      expect(Buffer.from(tls?.ca ?? []).toString()).toBe("PEM");
      expect(Buffer.from(tls?.key ?? []).toString()).toBe("PEM");
    }
  });

  it.each([
    [["--cert", "/etc/hostname"], /--cert and --key go together/],
    [["--ca", "/nonexistent.pem"], /--ca "\/nonexistent.pem" cannot be read/],
  ])("refuses %j with one line", (argv, message) => {
    const parsed = parseCliArgs(argv);
    expect(parsed).toMatchObject({ ok: false });
    if (!parsed.ok) expect(parsed.message).toMatch(message);
  });
});
