/**
 * `agentctl campaign why ID`: what the campaign's current batch waits for, one line per wait,
 * as Control's engine judges it (CampaignWaitsService).
 */

import {
  type GetCampaignWaitsResponse,
  GetCampaignWaitsResponseSchema,
} from "../../proto/gen/agentcontrol/admin/v1/campaign_waits_pb.js";
import { expectPositionals } from "../args.js";
import type { Command } from "../command.js";
import { messageJson } from "../output.js";
import { phaseName } from "./campaign-format.js";

/** The text `campaign why` prints: a heading naming phase and batch, then each wait. */
export function formatWaits(r: GetCampaignWaitsResponse): string {
  const head = `campaign ${r.campaignId} ${phaseName(r.phase)}, batch ${r.currentBatch + 1} of ${r.batchCount} waits for:`;
  return `${[head, ...r.waits.map((w) => `  - ${w.text}`)].join("\n")}\n`;
}

/** `campaign why ID`. */
export const whyCommand: Command = {
  summary: "Say what the campaign's current batch waits for",
  args: "ID",
  flags: {},
  details:
    "One line per wait, most blocking first: a pause, a closed window (and when it opens), nodes\n" +
    "in flight with their deadlines, full concurrency or pool budget, the minimum duration and\n" +
    "soak left, gates without a result or unreachable within their grace. With --json a\n" +
    "GetCampaignWaitsResponse (each wait with its kind, text and fields).",
  async run(ctx, { positionals }) {
    const [id = ""] = expectPositionals(positionals, ["ID"]);
    const response = await (await ctx.clients()).campaignWaits.getCampaignWaits(
      { id },
      { signal: ctx.signal },
    );
    if (ctx.output === "json")
      ctx.stdout.write(messageJson(GetCampaignWaitsResponseSchema, response));
    else ctx.stdout.write(formatWaits(response));
    return 0;
  },
};
