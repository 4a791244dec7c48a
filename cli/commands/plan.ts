/**
 * `agentctl plan start|show|list|abort`: rollout plans, one campaign template run over groups
 * of nodes in order (for example pools dev, staging, prod) with a wait between groups.
 */

import type { MessageInitShape } from "@bufbuild/protobuf";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import {
  ListPlansResponseSchema,
  type PlanGroupSchema,
  type RolloutPlan,
  RolloutPlanSchema,
} from "../../proto/gen/agentcontrol/admin/v1/rollout_pb.js";
import {
  boolFlag,
  expectPositionals,
  formatDuration,
  parseDuration,
  requiredFlag,
  stringFlag,
  UsageError,
} from "../args.js";
import type { CommandGroup } from "../command.js";
import { CONFIRM_DETAILS, confirmChange, YES_FLAG } from "../confirm.js";
import { answered } from "../errors.js";
import { formatFields, formatTable, formatTime, messageJson } from "../output.js";
import { SPEC_FLAGS, specFromFlags } from "./campaign-spec.js";

/** Groups from `--groups dev,staging,prod` (each a pool) as the API takes them. */
export function groupsFromFlag(text: string): MessageInitShape<typeof PlanGroupSchema>[] {
  const names = text
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  if (names.length === 0)
    throw new UsageError("--groups needs at least one pool, such as dev,staging,prod");
  return names.map((name) => ({ name, selector: { labels: {}, pools: [name], nodeIds: [] } }));
}

function durationText(ms: bigint | undefined, nanos: number | undefined): string {
  const total = Number(ms ?? 0n) * 1000 + Math.round((nanos ?? 0) / 1e6);
  return formatDuration(total);
}

/** `plan show` as fields and a table of groups. */
export function formatPlan(p: RolloutPlan): string {
  const fields: [string, string][] = [
    ["ID", p.id],
    ["PHASE", p.phase],
    ["VERSION", p.template?.targetVersion ?? "-"],
    ["WAIT", durationText(p.wait?.seconds, p.wait?.nanos)],
    ["CREATED", `${formatTime(p.createdAt)} by ${p.createdBy}`],
  ];
  if (p.nextGroupAt) fields.push(["NEXT GROUP AT", formatTime(p.nextGroupAt)]);
  if (p.message) fields.push(["MESSAGE", p.message]);
  const groups = formatTable(
    ["#", "GROUP", "POOLS", "CAMPAIGN", "STARTED", "ENDED", "OUTCOME"],
    p.groups.map((g, i) => [
      String(i + 1),
      g.name,
      g.selector?.pools.join(",") || "-",
      g.campaignId || "-",
      g.startedAt ? formatTime(g.startedAt) : "-",
      g.endedAt ? formatTime(g.endedAt) : "-",
      g.outcome || (i === p.currentGroup && p.phase === "running" ? "current" : "-"),
    ]),
  );
  return `${formatFields(fields)}\n${groups}`;
}

/** The `plan` command group. */
export const planGroup: CommandGroup = {
  name: "plan",
  summary: "Roll a release out over groups in order (dev, staging, prod) with a wait between",
  commands: {
    start: {
      summary: "Start a rollout plan: one campaign per group, each after the one before completed",
      flags: {
        ...SPEC_FLAGS,
        groups: {
          type: "string",
          value: "POOLS",
          description: "the groups, in order, one pool each: dev,staging,prod (required)",
        },
        wait: {
          type: "string",
          value: "DURATION",
          description: "wait between a group's completion and the next group's start (default 0s)",
        },
        ...YES_FLAG,
      },
      details:
        `${CONFIRM_DETAILS}\n` +
        "Every campaign flag applies to each group's campaign; a group's pool replaces --pool. A breach of a group (its campaign rolls back, fails or is aborted) halts the plan.",
      async run(ctx, { values, positionals }) {
        expectPositionals(positionals, []);
        const template = specFromFlags(values);
        const groups = groupsFromFlag(requiredFlag(values, "groups"));
        const waitText = stringFlag(values, "wait");
        const wait = waitText === undefined ? 0 : parseDuration(waitText, "wait");
        await confirmChange(ctx, values, {
          verb: "start",
          refused: "not started",
          question: `Start a plan upgrading ${groups.map((g) => g.name).join(", then ")} to ${template.targetVersion}?`,
        });
        const { plan: started } = await (await ctx.clients()).plans.startPlan(
          { template, groups, wait: durationFromMs(wait) },
          { signal: ctx.signal },
        );
        const plan = answered(started, "plan");
        if (ctx.output === "json") ctx.stdout.write(messageJson(RolloutPlanSchema, plan));
        else ctx.stdout.write(`plan ${plan.id} started\n${formatPlan(plan)}`);
        return 0;
      },
    },
    show: {
      summary: "Show a plan and its groups",
      flags: {},
      args: "ID",
      async run(ctx, { positionals }) {
        const [id = ""] = expectPositionals(positionals, ["ID"]);
        const answer = await (await ctx.clients()).plans.getPlan({ id }, { signal: ctx.signal });
        const plan = answered(answer.plan, "plan");
        ctx.stdout.write(
          ctx.output === "json" ? messageJson(RolloutPlanSchema, plan) : formatPlan(plan),
        );
        return 0;
      },
    },
    list: {
      summary: "List plans, newest first",
      flags: {},
      async run(ctx, { positionals }) {
        expectPositionals(positionals, []);
        const response = await (await ctx.clients()).plans.listPlans({}, { signal: ctx.signal });
        if (ctx.output === "json") {
          ctx.stdout.write(messageJson(ListPlansResponseSchema, response));
          return 0;
        }
        if (response.plans.length === 0) {
          ctx.stderr.write("No plans.\n");
          return 0;
        }
        ctx.stdout.write(
          formatTable(
            ["ID", "PHASE", "VERSION", "GROUPS", "CURRENT", "CREATED", "MESSAGE"],
            response.plans.map((p) => [
              p.id,
              p.phase,
              p.template?.targetVersion ?? "-",
              p.groups.map((g) => g.name).join(" → "),
              p.groups[p.currentGroup]?.name ?? "-",
              formatTime(p.createdAt),
              p.message || "-",
            ]),
          ),
        );
        return 0;
      },
    },
    abort: {
      summary: "Stop a running plan and abort its running group's campaign",
      args: "ID",
      flags: {
        rollback: { type: "boolean", description: "roll the running group's current batch back" },
        reason: { type: "string", value: "TEXT", description: "why, for the audit log" },
        ...YES_FLAG,
      },
      details: CONFIRM_DETAILS,
      async run(ctx, { values, positionals }) {
        const [id = ""] = expectPositionals(positionals, ["ID"]);
        await confirmChange(ctx, values, {
          verb: "abort",
          refused: "not aborted",
          question: `Abort plan ${id} and its running group's campaign${boolFlag(values, "rollback") ? ", rolling its current batch back" : ""}?`,
        });
        const { plan: aborted } = await (await ctx.clients()).plans.abortPlan(
          {
            id,
            rollback: boolFlag(values, "rollback"),
            reason: stringFlag(values, "reason") ?? "",
          },
          { signal: ctx.signal },
        );
        ctx.stdout.write(
          ctx.output === "json"
            ? messageJson(RolloutPlanSchema, answered(aborted, "plan"))
            : `plan ${id} aborted\n`,
        );
        return 0;
      },
    },
  },
};
