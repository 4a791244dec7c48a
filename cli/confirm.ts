/**
 * The one confirmation every command that starts or changes a campaign or the fleet goes
 * through: `--yes` skips it, a terminal asks y/N, and without a terminal nothing changes
 * (exit 2, one line saying to pass `--yes`). A command calls {@link confirmChange} after
 * its flags are checked and before its first call that changes anything.
 */
import type { FlagSpecs, FlagValues } from "./args.js";
import { boolFlag } from "./args.js";
import { type Context, ExitError } from "./command.js";

/** The `--yes` flag of every command that asks {@link confirmChange}; spread into its flags. */
export const YES_FLAG = {
  yes: { type: "boolean", short: "y", description: "do not ask for confirmation on a terminal" },
} as const satisfies FlagSpecs;

/** Help text of a command that asks {@link confirmChange}, for its `details`. */
export const CONFIRM_DETAILS =
  "On a terminal a y/N confirmation is asked unless --yes is given;\n" +
  "without a terminal (scripts, CI) nothing changes without --yes (exit 2).";

/** What is about to change, in the words of the command's refusal and its question. */
export interface Change {
  /** The verb of `pass --yes to VERB without confirmation`, such as `abort` or `start`. */
  readonly verb: string;
  /** The refusal's first words, such as `not aborted` or `not started`. */
  readonly refused: string;
  /** The y/N question, such as `Abort campaign c-1 and roll back its current batch?`. */
  readonly question: string;
  /**
   * Shown on stderr before the question (a campaign's plan); called only when a person
   * will be asked, so a `--yes` run or a refused one makes no extra call.
   */
  readonly preview?: () => Promise<void>;
}

/**
 * Resolves when the change may go ahead: at once with `--yes`; on a terminal once the
 * person answered y or yes to the question.
 * @throws ExitError 2 without `--yes` and without a terminal (nothing was asked or changed)
 * @throws ExitError 1 when the person answered anything but y or yes
 */
export async function confirmChange(
  ctx: Context,
  values: FlagValues,
  change: Change,
): Promise<void> {
  if (boolFlag(values, "yes")) return;
  if (!ctx.interactive) {
    throw new ExitError(
      2,
      `${change.refused}: no terminal to confirm on; pass --yes to ${change.verb} without confirmation`,
    );
  }
  await change.preview?.();
  if (!(await ctx.confirm(change.question))) {
    throw new ExitError(1, `${change.refused}: not confirmed`);
  }
}
