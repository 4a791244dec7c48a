/**
 * `agentctl ui`: the link that opens Control's dashboard signed in with the token agentctl
 * would use (`/ui/#token=…`: a URL fragment, which browsers never send to a server; the page
 * takes it out of the address bar at once). Prints it, and on a desktop opens it.
 */
import { spawn } from "node:child_process";
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { expectPositionals, stringFlag } from "../args.js";
import { type Command, type CommandGroup, ExitError } from "../command.js";

/** The dashboard link for `server` (an admin API base URL) signed in with `token`. */
export function dashboardLink(server: string, token: string): string {
  return `${server.replace(/\/+$/, "")}/ui/#token=${encodeURIComponent(token)}`;
}

/**
 * The program that opens a URL in the desktop's browser, or undefined where there is no
 * desktop (no `DISPLAY` or `WAYLAND_DISPLAY` on Linux; SSH sessions, containers, CI).
 */
export function desktopOpener(
  platform: NodeJS.Platform,
  env: Readonly<Record<string, string | undefined>>,
): string | undefined {
  if (platform === "darwin") return "open";
  if (platform === "linux" && (env.DISPLAY || env.WAYLAND_DISPLAY)) return "xdg-open";
  return undefined;
}

/**
 * Writes a page that sends the browser on to `url` into a fresh directory of mode 0700, the
 * page itself 0600, and returns its `file://` address: what the opener is given instead of the
 * link, so the token is on no command line another local user could read (`ps`). A detached
 * helper removes the directory a minute later, when the browser has long read the page.
 */
export function redirectPage(url: string): { readonly fileUrl: string; readonly dir: string } {
  const dir = mkdtempSync(join(tmpdir(), "agentctl-ui-"));
  chmodSync(dir, 0o700);
  const file = join(dir, "dashboard.html");
  const target = JSON.stringify(url).replace(/</g, "\\u003c");
  writeFileSync(
    file,
    `<!doctype html><meta charset="utf-8"><meta name="referrer" content="no-referrer"><title>Agent Control</title><script>location.replace(${target})</script>\n`,
    { mode: 0o600 },
  );
  return { fileUrl: pathToFileURL(file).href, dir };
}

/** Removes `dir` after `ms`, from a detached process that outlives agentctl. */
function removeLater(dir: string, ms: number): void {
  const child = spawn(
    process.execPath,
    [
      "-e",
      `setTimeout(() => require("node:fs").rmSync(${JSON.stringify(dir)}, { recursive: true, force: true }), ${ms})`,
    ],
    { detached: true, stdio: "ignore" },
  );
  child.once("error", () => {});
  child.unref();
}

/**
 * Starts `opener` on a page that forwards to `url` ({@link redirectPage}), detached; resolves
 * to false when it could not start.
 */
function openInBrowser(opener: string, url: string): Promise<boolean> {
  const page = redirectPage(url);
  removeLater(page.dir, 60_000);
  return new Promise((resolve) => {
    const child = spawn(opener, [page.fileUrl], { detached: true, stdio: "ignore" });
    child.once("error", () => resolve(false));
    child.once("spawn", () => {
      child.unref();
      resolve(true);
    });
  });
}

const uiCommand: Command = {
  summary: "Print (and on a desktop open) a link to Control's web dashboard, signed in",
  flags: {
    "no-open": { type: "boolean", description: "print the link only, never start a browser" },
  },
  details:
    "The link carries the admin token in its #fragment, which the browser keeps to itself;\n" +
    "whoever has the link has the token, so do not paste it into chats or tickets.\n" +
    "The token is checked first (an unknown or expired one fails here, not in the browser).",
  async run(ctx, { positionals, values }) {
    expectPositionals(positionals, []);
    const { resolveConnection } = await import("../client.js");
    const connection = resolveConnection({
      server: stringFlag(values, "server"),
      token: stringFlag(values, "token"),
      dataDir: stringFlag(values, "data-dir"),
      caFile: stringFlag(values, "ca-file"),
      env: ctx.env,
    });
    if (connection.server.startsWith("unix:")) {
      throw new ExitError(
        1,
        `the dashboard is served on Control's admin TCP address, not on ${connection.server}: pass --server http(s)://HOST:PORT`,
      );
    }
    if (connection.token === undefined) {
      throw new ExitError(
        1,
        `no admin token for ${connection.server}: pass --token or set AGENTCTL_TOKEN`,
      );
    }
    // The same call any command makes: a server that is down or a refused token says so here.
    await (await ctx.clients()).campaigns.listCampaigns({ pageSize: 1 });
    const url = dashboardLink(connection.server, connection.token);
    if (ctx.output === "json") {
      ctx.stdout.write(`${JSON.stringify({ url })}\n`);
      return 0;
    }
    ctx.stdout.write(`${url}\n`);
    const opener =
      values["no-open"] === true ? undefined : desktopOpener(process.platform, ctx.env);
    if (opener !== undefined && !(await openInBrowser(opener, url))) {
      ctx.stderr.write(`agentctl: could not start ${opener}; open the link above by hand\n`);
    }
    return 0;
  },
};

/** `agentctl ui` (one command, no subcommand). */
export const uiGroup: CommandGroup = {
  name: "ui",
  summary: "Print (and on a desktop open) a signed-in link to the web dashboard",
  commands: { "": uiCommand },
};
