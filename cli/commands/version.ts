/**
 * `agentctl version`: agentctl's own version, then that of the Control it talks to
 * (VersionService), as kubectl and gh print theirs. The client's part is printed first, so it
 * is there even when the server cannot be reached (which then fails the command as any
 * other call would).
 */
import { boolFlag, expectPositionals } from "../args.js";
import type { Command, CommandGroup } from "../command.js";
import { formatFields, plainJson } from "../output.js";
import { clientVersion } from "../version.js";

/** What `version --json` prints: `client`, and `server` unless `--client`. */
export interface VersionJson {
  client: { version: string; nodeVersion: string; platform: string };
  server?: {
    url: string;
    version: string;
    nodeVersion: string;
    platform: string;
    instanceId: string;
  };
}

const versionCommand: Command = {
  summary: "Print the versions of agentctl and of the Control it talks to",
  flags: { client: { type: "boolean", description: "agentctl's version only; ask no server" } },
  details:
    "Needs a token of any role for the server's part. With --json (or -o yaml) the output is\n" +
    '{"client": {version, nodeVersion, platform}, "server": {url, version, nodeVersion, platform, instanceId}}.',
  async run(ctx, { values, positionals }) {
    expectPositionals(positionals, []);
    const out: VersionJson = {
      client: {
        version: clientVersion(),
        nodeVersion: process.version.replace(/^v/, ""),
        platform: `${process.platform}-${process.arch}`,
      },
    };
    const json = ctx.output === "json";
    const clientLines = [
      ["Client version", out.client.version],
      ["Client runtime", `node ${out.client.nodeVersion} ${out.client.platform}`],
    ] as const;
    if (boolFlag(values, "client")) {
      ctx.stdout.write(json ? plainJson(out) : formatFields(clientLines));
      return 0;
    }
    const clients = await ctx.clients();
    let answer: Awaited<ReturnType<typeof clients.version.getVersion>>;
    try {
      answer = await clients.version.getVersion({}, { signal: ctx.signal });
    } catch (error) {
      // The client's part still answers the question asked first.
      if (!json) ctx.stdout.write(formatFields(clientLines));
      throw error;
    }
    out.server = {
      url: clients.server,
      version: answer.version,
      nodeVersion: answer.nodeVersion,
      platform: answer.platform,
      instanceId: answer.instanceId,
    };
    ctx.stdout.write(
      json
        ? plainJson(out)
        : formatFields([
            ...clientLines,
            ["Server", out.server.url],
            ["Server version", out.server.version],
            ["Server runtime", `node ${out.server.nodeVersion} ${out.server.platform}`],
            ["Server instance", out.server.instanceId],
          ]),
    );
    return 0;
  },
};

/** `agentctl version` (one command, no subcommand). */
export const versionGroup: CommandGroup = {
  name: "version",
  summary: "Print the versions of agentctl and of Control",
  commands: { "": versionCommand },
};
