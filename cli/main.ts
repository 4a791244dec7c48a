/**
 * agentctl's entry point: finds the command, parses its flags strictly, runs it, and turns
 * any failure into one line on stderr and a non-zero exit code (2 for usage mistakes,
 * 1 for everything else unless the command chose another, 130 on Ctrl-C).
 */
import { realpathSync } from "node:fs";
import { createInterface } from "node:readline/promises";
import { pathToFileURL } from "node:url";
import {
  checkClearTextToken,
  checkToken,
  type FlagValues,
  parseFlags,
  parseServerUrl,
  stringFlag,
  UsageError,
} from "./args.js";
import { readCaFile } from "./ca-file.js";
import type { AdminClients, CallState, Connection } from "./client.js";
import {
  type Command,
  type CommandGroup,
  type Context,
  ExitError,
  type OutputMode,
} from "./command.js";
import { commandHelp, GLOBAL_FLAGS, groupHelp, rootHelp } from "./help.js";
import type { Sink } from "./output.js";
import { createPainter } from "./paint.js";
import { printableOutput, printableSink } from "./printable.js";
import { didYouMean } from "./suggest.js";
import { resolveTimeoutMs } from "./timeout.js";
import { yamlSink } from "./yaml-output.js";

/**
 * A command group as the root help lists it; its module is imported only when one of its
 * commands runs, so `--help` and offline commands do not load the whole admin API.
 */
export interface GroupEntry {
  readonly name: string;
  readonly summary: string;
  load(): Promise<CommandGroup>;
}

/** Every command group, in the order help lists them. */
export const GROUPS: readonly GroupEntry[] = [
  {
    name: "node",
    summary: "List and inspect nodes, exclude them from campaigns",
    load: async () => (await import("./commands/node.js")).nodeGroup,
  },
  {
    name: "token",
    summary: "Manage join tokens with which new nodes enroll",
    load: async () => (await import("./commands/token.js")).tokenGroup,
  },
  {
    name: "release",
    summary: "Sign releases offline, register them with Control, list and yank them",
    load: async () => (await import("./commands/release.js")).releaseGroup,
  },
  {
    name: "tuf",
    summary: "Work offline on the release channel's TUF root and targets metadata",
    load: async () => (await import("./commands/tuf.js")).tufGroup,
  },
  {
    name: "campaign",
    summary: "Plan, start, watch and steer upgrade campaigns",
    load: async () => (await import("./commands/campaign.js")).campaignGroup,
  },
  {
    name: "audit",
    summary: "Read the audit log",
    load: async () => (await import("./commands/audit.js")).auditGroup,
  },
  {
    name: "desired",
    summary: "List, set and clear the version each selector's nodes converge to",
    load: async () => (await import("./commands/desired.js")).desiredGroup,
  },
  {
    name: "plan",
    summary: "Roll a release out over groups in order (dev, staging, prod) with a wait between",
    load: async () => (await import("./commands/plan.js")).planGroup,
  },
  {
    name: "tls",
    summary: "Create a fleet CA, Control's server certificate and node client certificates",
    load: async () => (await import("./commands/tls.js")).tlsGroup,
  },
  {
    name: "ui",
    summary: "Print (and on a desktop open) a signed-in link to the web dashboard",
    load: async () => (await import("./commands/ui.js")).uiGroup,
  },
  {
    name: "version",
    summary: "Print the versions of agentctl and of Control",
    load: async () => (await import("./commands/version.js")).versionGroup,
  },
  {
    name: "completion",
    summary: "Print a shell completion script",
    load: async () =>
      (await import("./commands/completion.js")).createCompletionGroup(loadAllGroups),
  },
];

/** The names of {@link GROUPS}, for "did you mean". */
const GROUP_NAMES = GROUPS.map((g) => g.name);

/**
 * `agentctl help [COMMAND [SUBCOMMAND]]`: the same text as `--help` at that level.
 * @throws UsageError for an unknown command or subcommand, with the closest name
 */
async function helpOf(groupName: string | undefined, commandName: string | undefined) {
  if (groupName === undefined) return rootHelp(GROUPS);
  const entry = GROUPS.find((g) => g.name === groupName);
  if (entry === undefined) {
    throw new UsageError(
      `no help for "${groupName}"${didYouMean(groupName, GROUP_NAMES)}; run "agentctl --help"`,
    );
  }
  const group = await entry.load();
  const name = commandName ?? (Object.hasOwn(group.commands, "") ? "" : undefined);
  if (name === undefined) return groupHelp(group);
  const command = Object.hasOwn(group.commands, name) ? group.commands[name] : undefined;
  if (command === undefined) {
    throw new UsageError(
      `no help for "${group.name} ${name}"${didYouMean(name, Object.keys(group.commands))}; run "agentctl ${group.name} --help"`,
    );
  }
  return commandHelp(group.name, name, command);
}

/** Loads every command group (for shell completion and tests). */
export async function loadAllGroups(): Promise<CommandGroup[]> {
  return await Promise.all(GROUPS.map((g) => g.load()));
}

/** What agentctl reads and writes; `process` in production, fakes in tests. */
export interface Io {
  readonly stdout: Sink;
  readonly stderr: Sink;
  readonly stdin?: NodeJS.ReadableStream & { isTTY?: boolean };
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly signal?: AbortSignal;
  readonly now?: () => Date;
}

/** Global flags that take a value, so the command finder can skip over their values. */
const VALUE_FLAGS = new Set([
  "--server",
  "--token",
  "--data-dir",
  "--ca-file",
  "--timeout",
  "--output",
  "-o",
]);

/** Splits argv into the command words (group, subcommand) and everything else. */
export function findCommand(argv: readonly string[]): { words: string[]; rest: string[] } {
  const words: string[] = [];
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i] ?? "";
    if (token === "--") {
      rest.push(...argv.slice(i));
      break;
    }
    if (words.length < 2 && !token.startsWith("-")) {
      words.push(token);
    } else {
      rest.push(token);
      if (VALUE_FLAGS.has(token) && i + 1 < argv.length) rest.push(argv[++i] ?? "");
    }
  }
  return { words, rest };
}

/** Runs agentctl with `argv` (without node and script) and resolves to its exit code. */
export async function run(argv: readonly string[], io: Io): Promise<number> {
  const signal = io.signal ?? new AbortController().signal;
  let connection: Connection | undefined;
  const calls: CallState = { method: undefined };
  try {
    const { words, rest } = findCommand(argv);
    const [groupName, named] = words;
    const wantsHelp = rest.includes("--help") || rest.includes("-h");
    if (groupName === "help") {
      io.stdout.write(
        await helpOf(
          named,
          rest.find((w) => !w.startsWith("-")),
        ),
      );
      return 0;
    }
    if (groupName === undefined) {
      if (!wantsHelp) throw new UsageError('missing command; run "agentctl --help"');
      io.stdout.write(rootHelp(GROUPS));
      return 0;
    }
    const entry = GROUPS.find((g) => g.name === groupName);
    if (entry === undefined) {
      throw new UsageError(
        `unknown command "${groupName}"${didYouMean(groupName, GROUP_NAMES)}; run "agentctl --help"`,
      );
    }
    const group = await entry.load();
    // A group of one unnamed command (`agentctl ui`) runs it without a subcommand.
    const commandName = named ?? (Object.hasOwn(group.commands, "") ? "" : undefined);
    if (commandName === undefined) {
      if (!wantsHelp)
        throw new UsageError(`missing subcommand; run "agentctl ${group.name} --help"`);
      io.stdout.write(groupHelp(group));
      return 0;
    }
    const command: Command | undefined = Object.hasOwn(group.commands, commandName)
      ? group.commands[commandName]
      : undefined;
    if (command === undefined) {
      const suggestion = didYouMean(commandName, Object.keys(group.commands));
      throw new UsageError(
        `unknown command "${group.name} ${commandName}"${suggestion}; run "agentctl ${group.name} --help"`,
      );
    }
    if (wantsHelp) {
      io.stdout.write(commandHelp(group.name, commandName, command));
      return 0;
    }
    const parsed = parseFlags(rest, { ...GLOBAL_FLAGS, ...command.flags });
    const format = outputMode(parsed.values.json === true, stringFlag(parsed.values, "output"));
    // -o yaml is the JSON output rendered as YAML: commands print JSON into a converting sink.
    const output: OutputMode = format === "yaml" ? "json" : format;
    // What is written for people shows control characters; JSON keeps its exact values.
    const stdout =
      format === "yaml" ? await yamlSink(io.stdout) : printableSink(io.stdout, output === "json");
    checkConnectionFlags(parsed.values, io.env);
    const timeoutMs = resolveTimeoutMs(stringFlag(parsed.values, "timeout"), io.env);
    let clients: AdminClients | undefined;
    const interactive = io.stdin?.isTTY === true && io.stderr.isTTY === true;
    const ctx: Context = {
      stdout,
      stderr: printableSink(io.stderr),
      env: io.env,
      signal,
      output,
      paint: createPainter(io.stdout.isTTY === true && (io.env.NO_COLOR ?? "") === ""),
      now: io.now ?? (() => new Date()),
      timeoutMs,
      clients: async () => {
        const { createAdminClients, resolveConnection } = await import("./client.js");
        connection ??= resolveConnection({
          server: stringFlag(parsed.values, "server"),
          token: stringFlag(parsed.values, "token"),
          dataDir: stringFlag(parsed.values, "data-dir"),
          caFile: stringFlag(parsed.values, "ca-file"),
          insecure: parsed.values.insecure === true,
          env: io.env,
        });
        clients ??= createAdminClients(connection, calls, timeoutMs);
        return clients;
      },
      interactive,
      confirm: (question) => confirm(io, question, signal),
    };
    return (await command.run(ctx, parsed)) ?? 0;
  } catch (error) {
    if (signal.aborted) {
      io.stderr.write("agentctl: interrupted\n");
      return 130;
    }
    // A usage mistake needs no error table (and so no Connect runtime) to be described.
    const line =
      error instanceof UsageError
        ? error.message
        : await (await import("./errors.js")).describeFailure(error, {
            connection,
            method: calls.method,
          });
    io.stderr.write(`agentctl: ${printableOutput(line)}\n`);
    if (error instanceof ExitError) return error.exitCode;
    return error instanceof UsageError ? 2 : 1;
  }
}

/**
 * Checks the connection flags and their environment variables before any command starts,
 * so a server that is no URL or a token no header can carry is a usage mistake (exit 2)
 * even for a command that would first read files or ask a question.
 */
function checkConnectionFlags(values: FlagValues, env: Io["env"]): void {
  const server = stringFlag(values, "server");
  if (server !== undefined) parseServerUrl(server, "--server");
  else if (env.AGENTCTL_SERVER) parseServerUrl(env.AGENTCTL_SERVER, "AGENTCTL_SERVER");
  const token = stringFlag(values, "token");
  if (token !== undefined) checkToken(token, "--token");
  else if (env.AGENTCTL_TOKEN) checkToken(env.AGENTCTL_TOKEN, "AGENTCTL_TOKEN");
  // The default server is loopback; a token given for another goes there only over TLS.
  const target = server ?? (env.AGENTCTL_SERVER || undefined);
  if (target !== undefined && (token || env.AGENTCTL_TOKEN)) {
    checkClearTextToken(parseServerUrl(target, "--server"), values.insecure === true);
  }
  if (stringFlag(values, "data-dir") === "")
    throw new UsageError("--data-dir must name a directory");
  const caFile = stringFlag(values, "ca-file");
  if (caFile !== undefined) readCaFile(caFile, "--ca-file");
  else if (env.AGENTCTL_CA_FILE) readCaFile(env.AGENTCTL_CA_FILE, "AGENTCTL_CA_FILE");
}

function outputMode(json: boolean, output: string | undefined): OutputMode | "yaml" {
  if (output === undefined) return json ? "json" : "table";
  if (output !== "table" && output !== "wide" && output !== "json" && output !== "yaml") {
    throw new UsageError(
      `invalid value "${output}" for --output: expected table, wide, json or yaml`,
    );
  }
  if (json && output !== "json") throw new UsageError(`--json and --output ${output} disagree`);
  return output;
}

async function confirm(io: Io, question: string, signal: AbortSignal): Promise<boolean> {
  if (io.stdin === undefined) return false;
  io.stderr.write(`${printableOutput(question)} [y/N] `);
  const rl = createInterface({ input: io.stdin, terminal: false });
  try {
    const answer = await new Promise<string>((resolve, reject) => {
      rl.once("line", resolve);
      rl.once("close", () => resolve("")); // end of input counts as "no"
      signal.addEventListener("abort", () => reject(signal.reason), { once: true });
    });
    return /^(y|yes)$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}

/** Runs agentctl on process.argv and exits; Ctrl-C aborts the running command (exit 130). */
export async function main(): Promise<void> {
  const controller = new AbortController();
  process.once("SIGINT", () => controller.abort());
  // `agentctl … | head` closes stdout early: stop quietly rather than crash on EPIPE.
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(0);
    throw error;
  });
  const code = await run(process.argv.slice(2), {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    env: process.env,
    signal: controller.signal,
  });
  process.exitCode = code;
  // Exit once stdout has drained: an idle keep-alive socket must not hold the process open.
  process.stdout.write("", () => process.exit(code));
}

// Run when this module is the program (through a symlink too, as a global install's bin is).
if (
  process.argv[1] !== undefined &&
  import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href
) {
  await main();
}
