/**
 * Runs agentctl in-process with captured output, for unit tests of whole commands.
 */
import { Readable } from "node:stream";
import { run } from "../../../cli/main.js";

/** What one agentctl run printed and returned. */
export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Options of {@link runCli}; `tty` makes stdout (and stderr) look like a terminal. */
export interface RunCliOptions {
  env?: Record<string, string | undefined>;
  tty?: boolean;
  columns?: number;
  signal?: AbortSignal;
  now?: () => Date;
  /** What the user types; a terminal when `tty` is set. */
  stdin?: string;
  /** Called with the stdout text so far after every write. */
  onStdout?: (text: string) => void;
}

/** Runs `agentctl argv…` with an empty environment unless `env` is given. */
export async function runCli(argv: string[], options: RunCliOptions = {}): Promise<CliResult> {
  let stdout = "";
  let stderr = "";
  const code = await run(argv, {
    stdout: {
      write: (text: string) => {
        stdout += text;
        options.onStdout?.(stdout);
        return true;
      },
      isTTY: options.tty ?? false,
      columns: options.columns ?? 120,
    },
    stderr: {
      write: (text: string) => {
        stderr += text;
        return true;
      },
      isTTY: options.tty ?? false,
    },
    env: options.env ?? {},
    ...(options.stdin === undefined
      ? {}
      : { stdin: Object.assign(Readable.from([options.stdin]), { isTTY: options.tty ?? false }) }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    ...(options.now === undefined ? {} : { now: options.now }),
  });
  return { code, stdout, stderr };
}
