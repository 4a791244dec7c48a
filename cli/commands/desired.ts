/**
 * `agentctl desired list|set|clear`: the version each selector's nodes should run. A completed
 * campaign sets it for its selector; nodes of it that are behind converge automatically.
 */

import { isSemver } from "../../control/shared/release/semver.js";
import {
  type DesiredVersion,
  DesiredVersionSchema,
  ListDesiredVersionsResponseSchema,
} from "../../proto/gen/agentcontrol/admin/v1/rollout_pb.js";
import {
  expectPositionals,
  listFlag,
  parseInteger,
  parseKeyValues,
  parsePercent,
  requiredFlag,
  stringFlag,
  UsageError,
} from "../args.js";
import type { CommandGroup } from "../command.js";
import { CONFIRM_DETAILS, confirmChange, YES_FLAG } from "../confirm.js";
import { answered } from "../errors.js";
import { formatTable, formatTime, messageJson } from "../output.js";

/** A selector in one short line: `pool=prod tier=web nodes=a,b -excluded`. */
export function selectorText(d: {
  readonly selector?: Omit<NonNullable<DesiredVersion["selector"]>, "$typeName"> | undefined;
  readonly exclude?: Omit<NonNullable<DesiredVersion["exclude"]>, "$typeName"> | undefined;
}): string {
  const parts: string[] = [];
  const s = d.selector;
  if (s && s.pools.length > 0) parts.push(`pool=${s.pools.join(",")}`);
  for (const [k, v] of Object.entries(s?.labels ?? {})) parts.push(`${k}=${v}`);
  if (s && s.nodeIds.length > 0) parts.push(`nodes=${s.nodeIds.join(",")}`);
  const x = d.exclude;
  if (x && x.nodeIds.length > 0) parts.push(`-nodes=${x.nodeIds.join(",")}`);
  for (const [k, v] of Object.entries(x?.tags ?? {})) parts.push(`-${k}=${v}`);
  return parts.length === 0 ? "(every node)" : parts.join(" ");
}

/** The `desired list` table. */
export function formatDesiredTable(items: readonly DesiredVersion[]): string {
  return formatTable(
    ["ID", "VERSION", "SELECTOR", "CONVERGED", "SET BY", "SET AT", "STATE"],
    items.map((d) => [
      d.id,
      d.targetVersion,
      selectorText(d),
      `${d.converged}/${d.nodes}`,
      d.setBy,
      formatTime(d.setAt),
      desiredState(d),
    ]),
  );
}

/**
 * What a desired version is doing: halted (with its reason), idle when it governs no node (a
 * newer desired version took all its nodes, or its selector matches none), converged when
 * every node it governs runs its target or is ahead of it (a higher sequence, never moved
 * back; counted apart), else converging with the count still behind.
 */
export function desiredState(
  d: Pick<DesiredVersion, "haltedReason" | "nodes" | "converged" | "ahead">,
): string {
  if (d.haltedReason) return `halted: ${d.haltedReason}`;
  if (d.nodes === 0) return "idle: governs no node";
  const behind = d.nodes - d.converged - d.ahead;
  if (behind <= 0) return d.ahead > 0 ? `converged (${d.ahead} ahead)` : "converged";
  return `converging: ${behind} behind`;
}

/** The `desired` command group. */
export const desiredGroup: CommandGroup = {
  name: "desired",
  summary: "List, set and clear the version each selector's nodes converge to",
  commands: {
    list: {
      summary: "List desired versions, newest first",
      flags: {},
      details:
        "CONVERGED counts the nodes a desired version governs that run its target. With --json a ListDesiredVersionsResponse.",
      async run(ctx, { positionals }) {
        expectPositionals(positionals, []);
        const response = await (await ctx.clients()).desired.listDesiredVersions(
          {},
          { signal: ctx.signal },
        );
        if (ctx.output === "json") {
          ctx.stdout.write(messageJson(ListDesiredVersionsResponseSchema, response));
          return 0;
        }
        if (response.desiredVersions.length === 0) {
          ctx.stderr.write("No desired versions.\n");
          return 0;
        }
        ctx.stdout.write(formatDesiredTable(response.desiredVersions));
        return 0;
      },
    },
    set: {
      summary: "Set the version the selected nodes converge to (clears a halt)",
      flags: {
        version: { type: "string", value: "V", description: "a registered release (required)" },
        selector: {
          type: "string",
          multiple: true,
          value: "KEY=VALUE",
          description: "only nodes with this label (repeatable)",
        },
        pool: {
          type: "string",
          multiple: true,
          value: "POOL",
          description: "only this pool (repeatable)",
        },
        node: {
          type: "string",
          multiple: true,
          value: "ID",
          description: "only this node (repeatable)",
        },
        "exclude-node": {
          type: "string",
          multiple: true,
          value: "ID",
          description: "leave this node out",
        },
        "exclude-tag": {
          type: "string",
          multiple: true,
          value: "KEY=VALUE",
          description: "leave out nodes with this label",
        },
        "max-failures": {
          type: "string",
          value: "N",
          description: "failed nodes that halt convergence (default 3)",
        },
        "disruption-budget": {
          type: "string",
          value: "PERCENT",
          description: "at most this share of each pool converging at once (default 5)",
        },
        reason: { type: "string", value: "TEXT", description: "why, for the audit log" },
        ...YES_FLAG,
      },
      details: CONFIRM_DETAILS,
      async run(ctx, { values, positionals }) {
        expectPositionals(positionals, []);
        const version = requiredFlag(values, "version");
        if (!isSemver(version)) {
          throw new UsageError(
            `invalid --version "${version}": expected a semantic version such as 1.4.0`,
          );
        }
        const maxFailures = stringFlag(values, "max-failures");
        const budget = stringFlag(values, "disruption-budget");
        const request = {
          targetVersion: version,
          selector: {
            labels: parseKeyValues(listFlag(values, "selector"), "selector"),
            pools: listFlag(values, "pool"),
            nodeIds: listFlag(values, "node"),
          },
          exclude: {
            nodeIds: listFlag(values, "exclude-node"),
            tags: parseKeyValues(listFlag(values, "exclude-tag"), "exclude-tag"),
          },
          ...(maxFailures === undefined
            ? {}
            : { maxFailures: parseInteger(maxFailures, "max-failures", 1, 100) }),
          ...(budget === undefined
            ? {}
            : { disruptionBudgetPercent: parsePercent(budget, "disruption-budget") }),
          reason: stringFlag(values, "reason") ?? "",
        };
        await confirmChange(ctx, values, {
          verb: "set it",
          refused: "not set",
          question: `Make the nodes of ${selectorText(request)} converge to ${version}?`,
        });
        const answer = await (await ctx.clients()).desired.setDesiredVersion(request, {
          signal: ctx.signal,
        });
        const d = answered(answer.desired, "desired version");
        if (ctx.output === "json") {
          ctx.stdout.write(messageJson(DesiredVersionSchema, d));
          return 0;
        }
        ctx.stdout.write(
          `desired version ${d.id} set: ${selectorText(d)} → ${d.targetVersion} (${d.converged}/${d.nodes} there)\n`,
        );
        return 0;
      },
    },
    clear: {
      summary: "Delete a desired version: its nodes stop converging",
      flags: { ...YES_FLAG },
      args: "ID",
      details: CONFIRM_DETAILS,
      async run(ctx, { values, positionals }) {
        const [id = ""] = expectPositionals(positionals, ["ID"]);
        await confirmChange(ctx, values, {
          verb: "clear it",
          refused: "not cleared",
          question: `Clear desired version ${id} (its nodes stop converging)?`,
        });
        await (await ctx.clients()).desired.clearDesiredVersion({ id }, { signal: ctx.signal });
        if (ctx.output === "json") ctx.stdout.write("{}\n");
        else ctx.stdout.write(`desired version ${id} cleared\n`);
        return 0;
      },
    },
  },
};
