/**
 * `agentctl desired list|set|clear`: the version each selector's nodes should run. A completed
 * campaign sets it for its selector; nodes of it that are behind converge automatically.
 */

import {
  type DesiredVersion,
  DesiredVersionSchema,
  ListDesiredVersionsResponseSchema,
} from "../../proto/gen/agentcontrol/admin/v1/rollout_pb.js";
import { expectPositionals } from "../args.js";
import type { CommandGroup } from "../command.js";
import { CONFIRM_DETAILS, confirmChange, YES_FLAG } from "../confirm.js";
import { answered } from "../errors.js";
import { FILE_FLAG } from "../flag-file.js";
import { idList } from "../id-list.js";
import { formatTable, formatTime, messageJson } from "../output.js";
import { DESIRED_FLAGS, desiredFromFlagsOrFile } from "./desired-spec.js";

/**
 * A selector in one short line: `pool=prod tier=web nodes=a,b -excluded`; long lists of node
 * ids shortened unless `wide` ({@link idList}).
 */
export function selectorText(
  d: {
    readonly selector?: Omit<NonNullable<DesiredVersion["selector"]>, "$typeName"> | undefined;
    readonly exclude?: Omit<NonNullable<DesiredVersion["exclude"]>, "$typeName"> | undefined;
  },
  wide = false,
): string {
  const parts: string[] = [];
  const s = d.selector;
  if (s && s.pools.length > 0) parts.push(`pool=${s.pools.join(",")}`);
  for (const [k, v] of Object.entries(s?.labels ?? {})) parts.push(`${k}=${v}`);
  if (s && s.nodeIds.length > 0) parts.push(`nodes=${idList(s.nodeIds, wide)}`);
  const x = d.exclude;
  if (x && x.nodeIds.length > 0) parts.push(`-nodes=${idList(x.nodeIds, wide)}`);
  for (const [k, v] of Object.entries(x?.tags ?? {})) parts.push(`-${k}=${v}`);
  return parts.length === 0 ? "(every node)" : parts.join(" ");
}

/** The `desired list` table; `wide` lists every node id of a selector. */
export function formatDesiredTable(items: readonly DesiredVersion[], wide = false): string {
  return formatTable(
    ["ID", "VERSION", "SELECTOR", "CONVERGED", "SET BY", "SET AT", "STATE"],
    items.map((d) => [
      d.id,
      d.targetVersion,
      selectorText(d, wide),
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
 * every node it governs runs its target, confirmed there, or is ahead of it (a higher
 * sequence, never moved back; counted apart), else converging with the count still behind and
 * the count on its target but still verifying (config grace not over; not converged yet).
 */
export function desiredState(
  d: Pick<DesiredVersion, "haltedReason" | "nodes" | "converged" | "ahead" | "verifying">,
): string {
  if (d.haltedReason) return `halted: ${d.haltedReason}`;
  if (d.nodes === 0) return "idle: governs no node";
  const behind = d.nodes - d.converged - d.ahead - d.verifying;
  if (behind <= 0 && d.verifying === 0)
    return d.ahead > 0 ? `converged (${d.ahead} ahead)` : "converged";
  const parts = [];
  if (behind > 0) parts.push(`${behind} behind`);
  if (d.verifying > 0) parts.push(`${d.verifying} verifying`);
  return `converging: ${parts.join(", ")}`;
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
        "CONVERGED counts the nodes a desired version governs that run its target, confirmed there;\n" +
        "nodes back on it but still verifying (their config grace not over) are said apart in STATE\n" +
        "(converging: 1 behind, 41 verifying). With --json a ListDesiredVersionsResponse.",
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
        ctx.stdout.write(formatDesiredTable(response.desiredVersions, ctx.output === "wide"));
        return 0;
      },
    },
    set: {
      summary: "Set the version the selected nodes converge to (clears a halt)",
      flags: { ...DESIRED_FLAGS, ...FILE_FLAG, ...YES_FLAG },
      details:
        `${CONFIRM_DETAILS}\n` +
        "-f FILE takes the fields from a YAML or JSON file whose fields are these flags' names\n" +
        "(version, selector, pool, …), or from a desired version `desired set -o yaml` printed;\n" +
        "no field flag may be given beside it. With --json the DesiredVersion set.",
      async run(ctx, { values, positionals }) {
        expectPositionals(positionals, []);
        const request = await desiredFromFlagsOrFile(values);
        await confirmChange(ctx, values, {
          verb: "set it",
          refused: "not set",
          question: `Make the nodes of ${selectorText(request)} converge to ${request.targetVersion}?`,
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
