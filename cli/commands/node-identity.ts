/**
 * `agentctl node label|approve|revoke`: what Control believes about a node and whether it
 * may stay connected.
 */
import { readFile } from "node:fs/promises";
import { basename } from "node:path";
import {
  ApproveNodeResponseSchema,
  LabelNodeResponseSchema,
  LabelNodesResponseSchema,
  RevokeNodeResponseSchema,
} from "../../proto/gen/agentcontrol/admin/v1/node_pb.js";
import {
  checkReadable,
  expectPositionals,
  parseKeyValues,
  stringFlag,
  UsageError,
} from "../args.js";
import type { Command } from "../command.js";
import { CONFIRM_DETAILS, confirmChange, YES_FLAG } from "../confirm.js";
import { formatLabels, messageJson } from "../output.js";
import { parseLabelFile } from "./node-label-file.js";

/** `k=v` items to set and `k-` items to remove, as `node label` takes them. */
export function parseLabelChanges(items: readonly string[]): {
  set: Record<string, string>;
  remove: string[];
} {
  if (items.length === 0) throw new UsageError("give at least one label: KEY=VALUE or KEY-");
  const remove = items.filter((item) => item.endsWith("-") && !item.includes("="));
  const set = parseKeyValues(
    items.filter((item) => !remove.includes(item)),
    "label",
  );
  return { set, remove: remove.map((item) => item.slice(0, -1)) };
}

/** `set a=1,b=2; removed c` as `node label --selector` prints what it changed. */
function changeText(set: Record<string, string>, remove: readonly string[]): string {
  const keys = Object.keys(set).sort();
  return [
    ...(keys.length > 0 ? [`set ${keys.map((k) => `${k}=${set[k]}`).join(",")}`] : []),
    ...(remove.length > 0 ? [`removed ${[...remove].sort().join(",")}`] : []),
  ].join("; ");
}

/** The node identity commands, merged into the `node` group. */
export const nodeIdentityCommands: Record<string, Command> = {
  label: {
    summary: "Assign labels to nodes (KEY=VALUE), or remove them (KEY-); audited",
    args: "[ID] LABEL…",
    flags: {
      selector: {
        type: "string",
        value: "K=V,…",
        description: "every node carrying all these labels, in one request (instead of ID)",
      },
      file: {
        type: "string",
        value: "FILE",
        description: "each node its own labels: YAML/JSON (id: {k: v}) or CSV (node,k1,k2)",
      },
    },
    details:
      "Labels that campaigns trust (canary, pool, selectors) come from the join token that\n" +
      "enrolled a node (agentctl token create --label), its client certificate (agentctl tls\n" +
      "issue-node --label) or from here, never from the node itself unless Control lists the\n" +
      "key in enrollment.agentReportedLabels. Assigned labels win over what the node reports\n" +
      "and survive its reconnects.\n" +
      "Many nodes at once, in one request and one transaction (all or none), audited once:\n" +
      "  --selector pool=web,zone=eu-1 LABEL…   every node carrying those labels\n" +
      "  --file labels.yaml                      web-17: {rack: r1, old: null}  (null removes)\n" +
      "  --file labels.csv                       node,rack,zone / web-17,r1,eu-1 (empty: leave)\n" +
      "A listed node that does not exist refuses the whole file.\n" +
      "Example: agentctl node label web-17 canary=true pool=web old-",
    async run(ctx, { values, positionals }) {
      const selectorText = stringFlag(values, "selector");
      const file = stringFlag(values, "file");
      if (selectorText !== undefined && file !== undefined) {
        throw new UsageError("give --selector or --file, not both");
      }
      if (file !== undefined) {
        expectPositionals(positionals, []);
        const text = await readFile(checkReadable(file, "--file"), "utf8");
        const nodes = parseLabelFile(basename(file), text);
        const response = await (await ctx.clients()).nodes.labelNodes(
          { nodes },
          { signal: ctx.signal },
        );
        ctx.stdout.write(
          ctx.output === "json"
            ? messageJson(LabelNodesResponseSchema, response)
            : `labelled ${response.changed} nodes from ${basename(file)}\n`,
        );
        return 0;
      }
      if (selectorText !== undefined) {
        const selector = parseKeyValues(
          selectorText.split(",").filter((item) => item !== ""),
          "selector",
        );
        if (Object.keys(selector).length === 0) {
          throw new UsageError("--selector needs at least one KEY=VALUE");
        }
        const { set, remove } = parseLabelChanges(positionals);
        const response = await (await ctx.clients()).nodes.labelNodes(
          { selector, set, remove },
          { signal: ctx.signal },
        );
        ctx.stdout.write(
          ctx.output === "json"
            ? messageJson(LabelNodesResponseSchema, response)
            : `labelled ${response.changed} nodes: ${changeText(set, remove)}\n`,
        );
        return 0;
      }
      const [nodeId = "", ...items] = positionals;
      if (!nodeId) throw new UsageError("missing ID (or --selector, or --file)");
      const { set, remove } = parseLabelChanges(items);
      const response = await (await ctx.clients()).nodes.labelNode(
        { nodeId, set, remove },
        { signal: ctx.signal },
      );
      ctx.stdout.write(
        ctx.output === "json"
          ? messageJson(LabelNodeResponseSchema, response)
          : `node ${nodeId} labels: ${formatLabels(response.node?.labels ?? {})}\n`,
      );
      return 0;
    },
  },
  approve: {
    summary: "Let a pending node take part in campaigns (enrollment.requireApproval); audited",
    args: "ID",
    flags: {},
    async run(ctx, { positionals }) {
      const [nodeId = ""] = expectPositionals(positionals, ["ID"]);
      const response = await (await ctx.clients()).nodes.approveNode(
        { nodeId },
        { signal: ctx.signal },
      );
      ctx.stdout.write(
        ctx.output === "json"
          ? messageJson(ApproveNodeResponseSchema, response)
          : `node ${nodeId} approved\n`,
      );
      return 0;
    },
  },
  revoke: {
    summary: "Cut a node off: token invalid, stream closed, certificate refused; audited",
    args: "ID",
    flags: {
      reason: { type: "string", value: "TEXT", description: "why, for the audit log" },
      ...YES_FLAG,
    },
    details:
      "For a compromised or retired node. Its node token stops working at once, its live\n" +
      "stream is closed on whichever Control holds it, the client certificate it last\n" +
      "connected with is refused until that certificate expires, and it can come back only\n" +
      "by enrolling again after an operator's reset (agentctl node reset ID) or with a join\n" +
      `token created for it (agentctl token create --node ID).\n${CONFIRM_DETAILS}`,
    async run(ctx, { values, positionals }) {
      const [nodeId = ""] = expectPositionals(positionals, ["ID"]);
      await confirmChange(ctx, values, {
        verb: "revoke",
        refused: "not revoked",
        question: `Revoke node ${nodeId}? It must enroll again.`,
      });
      const response = await (await ctx.clients()).nodes.revokeNode(
        { nodeId, reason: stringFlag(values, "reason") ?? "" },
        { signal: ctx.signal },
      );
      const certificates =
        response.deniedFingerprints.length > 0
          ? `; certificate ${response.deniedFingerprints.join(", ")} refused`
          : "";
      ctx.stdout.write(
        ctx.output === "json"
          ? messageJson(RevokeNodeResponseSchema, response)
          : `node ${nodeId} revoked: its token no longer works and its stream is closed${certificates}\n`,
      );
      return 0;
    },
  },
};
