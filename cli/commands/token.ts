/**
 * `agentctl token create|list|revoke`: join tokens with which new nodes enroll.
 */
import { durationFromMs, timestampDate } from "@bufbuild/protobuf/wkt";
import {
  CreateJoinTokenResponseSchema,
  type JoinToken,
  ListJoinTokensResponseSchema,
  RevokeJoinTokenResponseSchema,
} from "../../proto/gen/agentcontrol/admin/v1/node_pb.js";
import {
  boolFlag,
  expectPositionals,
  listFlag,
  parseDuration,
  parseInteger,
  parseKeyValues,
  stringFlag,
  UsageError,
} from "../args.js";
import type { CommandGroup } from "../command.js";
import { formatFields, formatTable, formatTime, messageJson } from "../output.js";

/** `active`, `revoked` or `expired` (as of `now`). */
export function joinTokenState(token: JoinToken, now: Date): string {
  if (token.revoked) return "revoked";
  if (token.expiresAt !== undefined && timestampDate(token.expiresAt) <= now) return "expired";
  return "active";
}

/**
 * What a join token may enroll: `new nodes` (the default), `nodes a,b` (only those, new or
 * existing), or `new nodes, re-enroll any` (`--allow-reenroll`).
 */
export function joinTokenScope(token: JoinToken): string {
  if (token.nodeIds.length > 0) return `nodes ${token.nodeIds.join(",")}`;
  return token.allowReenroll ? "new nodes, re-enroll any" : "new nodes";
}

/** The labels a join token assigns, `k=v,k=v` sorted by key, or `-`. */
export function tokenLabels(token: JoinToken): string {
  const keys = Object.keys(token.labels).sort();
  return keys.length === 0 ? "-" : keys.map((k) => `${k}=${token.labels[k]}`).join(",");
}

/** Formats join tokens as the `token list` table. */
export function formatTokenTable(tokens: readonly JoinToken[], now: Date): string {
  return formatTable(
    ["ID", "STATE", "CREATED", "EXPIRES", "USES", "SCOPE", "LABELS", "DESCRIPTION"],
    tokens.map((t) => [
      t.id,
      joinTokenState(t, now),
      formatTime(t.createdAt),
      formatTime(t.expiresAt),
      t.maxUses > 0 ? `${t.uses}/${t.maxUses}` : String(t.uses),
      joinTokenScope(t),
      tokenLabels(t),
      t.description || "-",
    ]),
  );
}

/** The `token` command group. */
export const tokenGroup: CommandGroup = {
  name: "token",
  summary: "Manage join tokens with which new nodes enroll",
  commands: {
    create: {
      summary: "Create a join token; its secret is shown once",
      flags: {
        ttl: {
          type: "string",
          value: "DURATION",
          description: "how long it stays valid (default 24h)",
        },
        description: { type: "string", value: "TEXT", description: "what it is for" },
        node: {
          type: "string",
          multiple: true,
          value: "ID",
          description: "enroll only this node id, new or already enrolled (repeatable)",
        },
        "allow-reenroll": {
          type: "boolean",
          description: "may also re-enroll any node id that already exists",
        },
        "max-uses": {
          type: "string",
          value: "N",
          description: "enroll at most N nodes, however many try at once (default: no limit)",
        },
        label: {
          type: "string",
          multiple: true,
          value: "KEY=VALUE",
          description: "assign this label to every node it enrolls (canary, pool, …; repeatable)",
        },
        quiet: { type: "boolean", short: "q", description: "print only the secret" },
      },
      details:
        "By default a join token enrolls only node ids that do not exist yet: a node that is\n" +
        "already enrolled keeps its node token, and a Hello naming it is refused. To let a\n" +
        "node that lost its state enroll again, reset it (agentctl node reset ID), or create\n" +
        "a token with --node ID (only those ids, new or existing) or --allow-reenroll (any\n" +
        "existing id: its old node token stops working). Every re-enrollment is audited.\n" +
        "--max-uses N: at most N enrollments ever, enforced atomically (a burst of N+k\n" +
        "agents enrolls exactly N). --label KEY=VALUE: labels campaigns trust (canary, pool,\n" +
        "selectors) given to every node it enrolls; a node's own Hello cannot set them.\n" +
        "With --json the output is a CreateJoinTokenResponse (token and secret).\n" +
        "Example: npm run sim -- --count 10 --join-token $(agentctl token create -q)",
      async run(ctx, { values, positionals }) {
        expectPositionals(positionals, []);
        const ttlText = stringFlag(values, "ttl");
        const ttlMs = ttlText === undefined ? undefined : parseDuration(ttlText, "ttl");
        if (ttlMs === 0) throw new UsageError("--ttl must be longer than 0s");
        const nodeIds = listFlag(values, "node");
        const allowReenroll = boolFlag(values, "allow-reenroll");
        if (nodeIds.length > 0 && allowReenroll) {
          throw new UsageError(
            "--node and --allow-reenroll cannot be used together: a token for named nodes already re-enrolls them",
          );
        }
        const maxUsesText = stringFlag(values, "max-uses");
        const maxUses =
          maxUsesText === undefined ? 0 : parseInteger(maxUsesText, "max-uses", 1, 1_000_000);
        const labels = parseKeyValues(listFlag(values, "label"), "label");
        const response = await (await ctx.clients()).nodes.createJoinToken(
          {
            description: stringFlag(values, "description") ?? "",
            nodeIds,
            allowReenroll,
            maxUses,
            labels,
            ...(ttlMs === undefined ? {} : { ttl: durationFromMs(ttlMs) }),
          },
          { signal: ctx.signal },
        );
        if (ctx.output === "json") {
          ctx.stdout.write(messageJson(CreateJoinTokenResponseSchema, response));
        } else if (boolFlag(values, "quiet")) {
          ctx.stdout.write(`${response.secret}\n`);
        } else {
          ctx.stdout.write(
            formatFields([
              ["Id", response.token?.id ?? ""],
              ["Secret", response.secret],
              ["Expires", formatTime(response.token?.expiresAt)],
              ["Scope", response.token ? joinTokenScope(response.token) : ""],
            ]),
          );
          ctx.stderr.write(
            "The secret is shown only once; agents enroll with it as their join token.\n",
          );
        }
        return 0;
      },
    },
    list: {
      summary: "List join tokens (without their secrets)",
      flags: {},
      async run(ctx, { positionals }) {
        expectPositionals(positionals, []);
        const response = await (await ctx.clients()).nodes.listJoinTokens(
          {},
          { signal: ctx.signal },
        );
        if (ctx.output === "json") {
          ctx.stdout.write(messageJson(ListJoinTokensResponseSchema, response));
        } else if (response.tokens.length === 0) {
          ctx.stderr.write("No join tokens.\n");
        } else {
          ctx.stdout.write(formatTokenTable(response.tokens, ctx.now()));
        }
        return 0;
      },
    },
    revoke: {
      summary: "Make a join token unusable at once",
      args: "ID",
      flags: {},
      async run(ctx, { positionals }) {
        const [id = ""] = expectPositionals(positionals, ["ID"]);
        const response = await (await ctx.clients()).nodes.revokeJoinToken(
          { id },
          { signal: ctx.signal },
        );
        ctx.stdout.write(
          ctx.output === "json"
            ? messageJson(RevokeJoinTokenResponseSchema, response)
            : `join token ${id} revoked\n`,
        );
        return 0;
      },
    },
  },
};
