import { describe, expect, it } from "vitest";
import { dashboardLink, desktopOpener } from "../../../cli/commands/ui.js";

describe("agentctl ui", () => {
  it("puts the token in the fragment of the dashboard's URL, escaped", () => {
    expect(dashboardLink("http://127.0.0.1:7080", "aat_abc")).toBe(
      "http://127.0.0.1:7080/ui/#token=aat_abc",
    );
    expect(dashboardLink("https://control.example/", "a&b=c#d")).toBe(
      "https://control.example/ui/#token=a%26b%3Dc%23d",
    );
  });

  it.each([
    ["linux", { DISPLAY: ":0" }, "xdg-open"],
    ["linux", { WAYLAND_DISPLAY: "wayland-0" }, "xdg-open"],
    ["linux", {}, undefined],
    ["darwin", {}, "open"],
    ["win32", { DISPLAY: ":0" }, undefined],
  ] as const)("on %s with %j opens with %s", (platform, env, opener) => {
    expect(desktopOpener(platform, env)).toBe(opener);
  });
});

describe("agentctl ui on a desktop", () => {
  it("gives the browser opener a 0600 page that forwards to the link, never the token on its command line", async () => {
    const { mkdtemp, readFile, rm, stat, writeFile } = await import("node:fs/promises");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const { fileURLToPath } = await import("node:url");
    const { startFakeControl } = await import("./fake-control.js");
    const { runCli } = await import("./run-cli.js");
    const bin = await mkdtemp(join(tmpdir(), "agentctl-ui-test-"));
    const argvFile = join(bin, "argv");
    // A stand-in xdg-open that records what it was given.
    await writeFile(join(bin, "xdg-open"), `#!/bin/sh\nprintf '%s\\n' "$@" > ${argvFile}\n`, {
      mode: 0o755,
    });
    const fake = await startFakeControl();
    const path = process.env.PATH;
    process.env.PATH = `${bin}:${path}`;
    try {
      const token = "operator-token";
      const result = await runCli(["ui"], {
        env: { AGENTCTL_SERVER: fake.url, AGENTCTL_TOKEN: token, DISPLAY: ":0" },
      });
      expect(result.code, result.stderr).toBe(0);
      let argv = "";
      for (let i = 0; i < 100 && argv === ""; i++) {
        argv = await readFile(argvFile, "utf8").catch(() => "");
        if (argv === "") await new Promise((r) => setTimeout(r, 50));
      }
      expect(argv).toMatch(/^file:\/\/.*\/dashboard\.html\n$/);
      expect(argv).not.toContain(token);
      const page = fileURLToPath(argv.trim());
      expect((await stat(page)).mode & 0o777).toBe(0o600);
      expect((await stat(join(page, ".."))).mode & 0o777).toBe(0o700);
      expect(await readFile(page, "utf8")).toContain(
        `location.replace(${JSON.stringify(dashboardLink(fake.url, token))})`,
      );
      await rm(join(page, ".."), { recursive: true, force: true });
    } finally {
      process.env.PATH = path;
      await fake.stop();
      await rm(bin, { recursive: true, force: true });
    }
  });
});
