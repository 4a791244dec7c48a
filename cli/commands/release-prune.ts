/**
 * `agentctl release prune`: frees the artifact bytes Control stores for releases nothing
 * needs (ReleaseService.PruneReleases), keeping the signed metadata; `--dry-run` lists what
 * would go.
 */
import {
  type PruneReleasesResponse,
  PruneReleasesResponseSchema,
} from "../../proto/gen/agentcontrol/admin/v1/release_pb.js";
import { boolFlag, expectPositionals, parseInteger, stringFlag } from "../args.js";
import { formatBytes } from "../bytes.js";
import type { Command } from "../command.js";
import { CONFIRM_DETAILS, confirmChange, YES_FLAG } from "../confirm.js";
import { formatTable, messageJson } from "../output.js";

/** How many kept releases the summary names before "and N more". */
const KEPT_NAMED = 10;

/** The table of what a prune frees and the line that sums it up. */
export function formatPrune(response: PruneReleasesResponse): string {
  const kept = response.kept.map((k) => `${k.version} (${k.reason})`);
  const keptText =
    kept.length === 0
      ? "kept none"
      : `kept ${kept.slice(0, KEPT_NAMED).join(", ")}${kept.length > KEPT_NAMED ? `, and ${kept.length - KEPT_NAMED} more` : ""}`;
  if (response.pruned.length === 0) return `nothing to prune; ${keptText}\n`;
  const table = formatTable(
    ["VERSION", "SEQUENCE", "YANKED", "FREES"],
    response.pruned.map((p) => [
      p.version,
      p.sequence.toString(),
      p.yanked ? "yes" : "no",
      formatBytes(Number(p.freedBytes)),
    ]),
  );
  const total = `${formatBytes(Number(response.freedBytes))} of ${response.pruned.length} releases`;
  return response.dryRun
    ? `${table}would free ${total} (dry run: nothing changed)\n${keptText}\n`
    : `${table}freed ${total}; ${keptText}\n`;
}

/** `agentctl release prune`. */
export const pruneCommand: Command = {
  summary: "Free the stored artifacts of releases nothing needs; the signed metadata stays",
  flags: {
    keep: {
      type: "string",
      value: "N",
      description: "also keep the newest N releases that are not yanked (default 3)",
    },
    "dry-run": { type: "boolean", description: "list what would go; change nothing" },
    ...YES_FLAG,
  },
  details:
    "Kept, whatever --keep says: every release a node runs or may roll back to (its current\n" +
    "and previous version), and every release a live campaign, a desired version or a\n" +
    "running rollout plan names. The others' artifact files are deleted from Control's\n" +
    "database, yanked releases first, then oldest first; their signed envelopes stay, so\n" +
    "`release list` and `release show` still answer (the artifacts marked pruned), and\n" +
    "registering a release again with its files restores them. Audited once. PostgreSQL\n" +
    "reuses the space for the next releases; `VACUUM FULL artifact_files` returns it to the\n" +
    `operating system.\n${CONFIRM_DETAILS}`,
  async run(ctx, { values, positionals }) {
    expectPositionals(positionals, []);
    const keepText = stringFlag(values, "keep");
    const keep = keepText === undefined ? undefined : parseInteger(keepText, "keep", 0, 10_000);
    const dryRun = boolFlag(values, "dry-run");
    if (!dryRun) {
      await confirmChange(ctx, values, {
        verb: "prune",
        refused: "nothing pruned",
        question: "Delete the stored artifacts of the releases nothing needs (see --dry-run)?",
      });
    }
    const response = await (await ctx.clients()).releases.pruneReleases(
      { ...(keep === undefined ? {} : { keep }), dryRun },
      { signal: ctx.signal },
    );
    ctx.stdout.write(
      ctx.output === "json"
        ? messageJson(PruneReleasesResponseSchema, response)
        : formatPrune(response),
    );
    return 0;
  },
};
