/**
 * How long agentctl waits for Control: `--timeout` or `AGENTCTL_TIMEOUT` (default 30 s; `0s`
 * waits forever). Kept free of the Connect runtime so that `--help` does not load it.
 */
import { formatDuration, parseDuration, UsageError } from "./args.js";

/** The wait when neither `--timeout` nor `AGENTCTL_TIMEOUT` is set. */
export const DEFAULT_TIMEOUT_MS = 30_000;

/**
 * The timeout in milliseconds from the flag, else the environment, else the default;
 * undefined for `0s` (no limit).
 * @throws UsageError naming the source when the value is not a duration such as 30s or 2m
 */
export function resolveTimeoutMs(
  flag: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): number | undefined {
  const fromEnv = env.AGENTCTL_TIMEOUT || undefined;
  const text = flag ?? fromEnv;
  if (text === undefined) return DEFAULT_TIMEOUT_MS;
  try {
    const ms = parseDuration(text, "timeout");
    return ms === 0 ? undefined : ms;
  } catch (error) {
    if (flag === undefined && error instanceof UsageError) {
      throw new UsageError(
        `invalid duration "${text}" in AGENTCTL_TIMEOUT: use such as 30s, 2m or 0s (no limit)`,
      );
    }
    throw error;
  }
}

/** The timeout as the user would type it (`30s`, `2m`). */
export function describeTimeout(ms: number): string {
  return formatDuration(ms);
}
