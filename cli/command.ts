/**
 * The shape of an agentctl command and the context it runs in. Commands are plain
 * objects grouped by noun (`node`, `campaign`, …); `main` parses flags against the
 * global flags plus the command's own and hands the result to `run`.
 */
import type { FlagSpecs, ParsedArgs } from "./args.js";
import type { AdminClients } from "./client.js";
import type { Painter, Sink } from "./output.js";

/** How results are printed: aligned table, table with more columns, or JSON. */
export type OutputMode = "table" | "wide" | "json";

/** Everything a command may use; nothing else reaches the outside world. */
export interface Context {
  readonly stdout: Sink;
  readonly stderr: Sink;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Aborted on Ctrl-C; long-running commands stop and main exits 130. */
  readonly signal: AbortSignal;
  readonly output: OutputMode;
  /** Colours only when stdout is a terminal and `NO_COLOR` is unset. */
  readonly paint: Painter;
  readonly now: () => Date;
  /**
   * How long a call may wait (`--timeout`, `AGENTCTL_TIMEOUT`, 30 s by default); undefined: no
   * limit. The clients apply it to every call; a command that streams a large request
   * (`release register`) applies it to each silence instead.
   */
  readonly timeoutMs?: number | undefined;
  /**
   * The admin API clients, created on first use with the server and credential from
   * flags, environment or the local token file (offline commands never call this).
   */
  clients(): Promise<AdminClients>;
  /** True when a person can answer a question on this terminal. */
  readonly interactive: boolean;
  /** Asks a yes/no question on the terminal; false unless the answer is y or yes. */
  confirm(question: string): Promise<boolean>;
}

/** One runnable command, such as `node list`. */
export interface Command {
  /** One line for the group's help. */
  readonly summary: string;
  /** Positional arguments as shown in usage, such as `ID` or `[ENVELOPE]`. */
  readonly args?: string;
  readonly flags: FlagSpecs;
  /** Extra help text printed after the flags. */
  readonly details?: string;
  /** Runs the command; resolves to its exit code (0 when nothing is returned). */
  run(ctx: Context, parsed: ParsedArgs): Promise<number | undefined>;
}

/** The commands of one noun, such as `campaign`. */
export interface CommandGroup {
  readonly name: string;
  readonly summary: string;
  readonly commands: Readonly<Record<string, Command>>;
}

/** A failure with its own exit code and one-line reason (for example a finished watch). */
export class ExitError extends Error {
  readonly exitCode: number;

  constructor(exitCode: number, message: string) {
    super(message);
    this.name = "ExitError";
    this.exitCode = exitCode;
  }
}
