/**
 * `agentctl campaign skip-gate ID GATE --reason TEXT`: an operator's way past a broken outside
 * health gate. The gate (its number, from 1, as `campaign show` lists it) counts as holding for
 * the campaign's current batch only; the next batch evaluates it again. Audited with the
 * operator and the reason.
 */

import { SkipGateResponseSchema } from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { expectPositionals, parseInteger, stringFlag, UsageError } from "../args.js";
import type { Command } from "../command.js";
import { CONFIRM_DETAILS, confirmChange, YES_FLAG } from "../confirm.js";
import { messageJson } from "../output.js";
import { phaseName } from "./campaign-format.js";

/** `campaign skip-gate ID GATE --reason TEXT [--yes]`. */
export const skipGateCommand: Command = {
  summary:
    "Let the current batch pass one gate without its result (the next batch checks it again)",
  args: "ID GATE",
  flags: {
    reason: { type: "string", value: "TEXT", description: "why, for the audit log (required)" },
    ...YES_FLAG,
  },
  details:
    "GATE is the gate's number, counted from 1 as `campaign show` lists the gates. Operator\n" +
    "only; the audit log records who skipped which gate of which batch, and why.\n" +
    `${CONFIRM_DETAILS}\nWith --json the output is a SkipGateResponse.`,
  async run(ctx, { values, positionals }) {
    const [id = "", gateText = ""] = expectPositionals(positionals, ["ID", "GATE"]);
    const gate = parseInteger(gateText, "gate", 1, 1000);
    const reason = stringFlag(values, "reason")?.trim() ?? "";
    if (reason === "") throw new UsageError("--reason is required: say why the gate is skipped");
    await confirmChange(ctx, values, {
      verb: "skip it",
      refused: "not skipped",
      question: `Let the current batch of campaign ${id} pass without gate ${gate}? The next batch checks it again.`,
    });
    const response = await (await ctx.clients()).campaigns.skipGate(
      { id, gate, reason },
      { signal: ctx.signal },
    );
    if (ctx.output === "json") {
      ctx.stdout.write(messageJson(SkipGateResponseSchema, response));
      return 0;
    }
    const c = response.campaign;
    const where =
      c === undefined
        ? ""
        : `; now batch ${c.currentBatch + 1} of ${c.batches.length}, phase ${phaseName(c.phase)}`;
    ctx.stdout.write(`campaign ${id}: gate ${gate} skipped for its current batch${where}\n`);
    return 0;
  },
};
