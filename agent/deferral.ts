/**
 * Whether the real Agent's node is busy: an update lock file that exists (as balena's update
 * lock), or a command that exits non-zero. Either makes the Agent answer an upgrade DEFERRED
 * with the reason, and Control offers it again later (up to the campaign's `--max-defer`).
 */
import { execFile } from "node:child_process";
import { access } from "node:fs/promises";

/** What makes the node defer: a lock file, a command, both, or neither. */
export interface DeferralOptions {
  readonly lockFile: string | undefined;
  readonly command: readonly string[] | undefined;
}

/** How long a deferral command may run before it counts as "busy". */
const COMMAND_TIMEOUT_MS = 10_000;

/**
 * Why the node cannot take an upgrade now, or undefined when it can. Never rejects: a command
 * that cannot run, or runs past 10 s, counts as busy (its reason says so).
 */
export async function deferralReason(options: DeferralOptions): Promise<string | undefined> {
  if (options.lockFile !== undefined) {
    const held = await access(options.lockFile).then(
      () => true,
      () => false,
    );
    if (held) return `the update lock ${options.lockFile} is held`;
  }
  const [program, ...args] = options.command ?? [];
  if (program === undefined) return undefined;
  return new Promise((resolve) => {
    execFile(
      program,
      args,
      { timeout: COMMAND_TIMEOUT_MS, maxBuffer: 64 * 1024 },
      (error, stdout, stderr) => {
        if (error === null) {
          resolve(undefined);
          return;
        }
        const first = `${stdout}\n${stderr}`
          .split("\n")
          .map((l) => l.trim())
          .find((l) => l !== "");
        const code = (error as { code?: unknown }).code;
        const how = typeof code === "number" ? `exited with code ${code}` : error.message;
        resolve(`${[program, ...args].join(" ")} ${how}${first ? `: ${first.slice(0, 200)}` : ""}`);
      },
    );
  });
}
