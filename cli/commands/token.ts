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
import { boolFlag, expectPositionals, parseDuration, stringFlag, UsageError } from "../args.js";
import type { CommandGroup } from "../command.js";
import { formatFields, formatTable, formatTime, messageJson } from "../output.js";

/** `active`, `revoked` or `expired` (as of `now`). */
export function joinTokenState(token: JoinToken, now: Date): string {
  if (token.revoked) return "revoked";
  if (token.expiresAt !== undefined && timestampDate(token.expiresAt) <= now) return "expired";
  return "active";
}

/** Formats join tokens as the `token list` table. */
export function formatTokenTable(tokens: readonly JoinToken[], now: Date): string {
  return formatTable(
    ["ID", "STATE", "CREATED", "EXPIRES", "USES", "DESCRIPTION"],
    tokens.map((t) => [
      t.id,
      joinTokenState(t, now),
      formatTime(t.createdAt),
      formatTime(t.expiresAt),
      String(t.uses),
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
        quiet: { type: "boolean", short: "q", description: "print only the secret" },
      },
      details:
        "With --json the output is a CreateJoinTokenResponse (token and secret).\n" +
        "Example: npm run sim -- --count 10 --join-token $(agentctl token create -q)",
      async run(ctx, { values, positionals }) {
        expectPositionals(positionals, []);
        const ttlText = stringFlag(values, "ttl");
        const ttlMs = ttlText === undefined ? undefined : parseDuration(ttlText, "ttl");
        if (ttlMs === 0) throw new UsageError("--ttl must be longer than 0s");
        const response = await (await ctx.clients()).nodes.createJoinToken(
          {
            description: stringFlag(values, "description") ?? "",
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
