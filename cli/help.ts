/**
 * Usage text for agentctl, its command groups and each command, generated from the same
 * flag specifications the parser uses, so help never drifts from what is accepted.
 */
import type { FlagSpecs } from "./args.js";
import type { Command, CommandGroup } from "./command.js";

/** Flags every command accepts, before or after the command name. */
export const GLOBAL_FLAGS: FlagSpecs = {
  server: {
    type: "string",
    value: "URL",
    description:
      "admin API of Control, a URL or unix:PATH of its admin socket (env AGENTCTL_SERVER; default http://127.0.0.1:7080)",
  },
  token: {
    type: "string",
    value: "TOKEN",
    description:
      "bearer token (env AGENTCTL_TOKEN; for a local server, default <data dir>/admin-token, sent only over the data dir's admin socket)",
  },
  "data-dir": {
    type: "string",
    value: "DIR",
    description:
      "Control's data directory (env AGENT_CONTROL_DATA_DIR; default: that of the local Control serving --server, else .data)",
  },
  "ca-file": {
    type: "string",
    value: "FILE",
    description:
      "PEM CA certificate(s) to trust for an https:// server, e.g. a private CA (env AGENTCTL_CA_FILE)",
  },
  insecure: {
    type: "boolean",
    description:
      "send the token over http:// to a server not on loopback anyway (clear text on the network; use https://)",
  },
  timeout: {
    type: "string",
    value: "DURATION",
    description:
      "give up on a call Control has not answered after this long (env AGENTCTL_TIMEOUT; default 30s; 0s: never)",
  },
  json: { type: "boolean", description: "print machine-readable JSON" },
  output: {
    type: "string",
    short: "o",
    value: "FORMAT",
    description: "table (default), wide, json or yaml",
  },
  help: { type: "boolean", short: "h", description: "show help" },
};

function flagLines(flags: FlagSpecs): string[] {
  const entries = Object.entries(flags).map(([name, spec]) => {
    const short = spec.short === undefined ? "    " : `-${spec.short}, `;
    const value = spec.type === "string" ? ` ${spec.value ?? "VALUE"}` : "";
    const repeat = spec.multiple === true ? " …" : "";
    return [`${short}--${name}${value}${repeat}`, spec.description] as const;
  });
  const width = Math.max(0, ...entries.map(([f]) => f.length));
  return entries.map(([f, d]) => `  ${f.padEnd(width)}  ${d}`);
}

function listLines(items: readonly (readonly [string, string])[]): string[] {
  const width = Math.max(0, ...items.map(([n]) => n.length));
  return items.map(([n, s]) => `  ${n.padEnd(width)}  ${s}`);
}

/** The help of `agentctl` itself. */
export function rootHelp(groups: readonly { name: string; summary: string }[]): string {
  return [
    "agentctl: the administrator's tool for Agent Control",
    "",
    "Usage: agentctl COMMAND SUBCOMMAND [flags] [arguments]",
    "",
    "Commands:",
    ...listLines(groups.map((g) => [g.name, g.summary] as const)),
    "",
    "Global flags:",
    ...flagLines(GLOBAL_FLAGS),
    "",
    'Run "agentctl help COMMAND" (or "agentctl COMMAND --help") for its subcommands.',
    "Exit codes: 0 success, 1 error (reason on stderr), 2 bad usage, 3 campaign watch ended unsuccessfully, 130 interrupted.",
    "",
  ].join("\n");
}

/** The help of a command group, such as `agentctl campaign --help`. */
export function groupHelp(group: CommandGroup): string {
  return [
    `Usage: agentctl ${group.name} SUBCOMMAND [flags] [arguments]`,
    "",
    group.summary,
    "",
    "Subcommands:",
    ...listLines(
      Object.entries(group.commands).map(
        ([name, c]) => [`${name}${c.args ? ` ${c.args}` : ""}`, c.summary] as const,
      ),
    ),
    "",
    `Run "agentctl ${group.name} SUBCOMMAND --help" for its flags.`,
    "",
  ].join("\n");
}

/** The help of one command, with its own flags and the global ones. */
export function commandHelp(group: string, name: string, command: Command): string {
  const own = flagLines(command.flags);
  return [
    `Usage: agentctl ${[group, name].filter((w) => w !== "").join(" ")}${Object.keys(command.flags).length > 0 ? " [flags]" : ""}${command.args ? ` ${command.args}` : ""}`,
    "",
    command.summary,
    "",
    ...(own.length > 0 ? ["Flags:", ...own, ""] : []),
    "Global flags:",
    ...flagLines(GLOBAL_FLAGS),
    ...(command.details === undefined ? [] : ["", command.details]),
    "",
  ].join("\n");
}
