/**
 * `agentctl campaign watch ID`: follows the WatchCampaign stream. On a terminal it redraws
 * one progress bar per batch in place, ticking the current batch's time left every second;
 * otherwise it prints a line per campaign or batch state change (campaign-watch-lines.ts),
 * and with `--events` a line per node change (campaign-watch-events.ts). Exits 0 when the campaign completed, 3 when it
 * ended rolled back, aborted or failed, 130 on Ctrl-C.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  BatchState,
  type BatchStatus,
  type Campaign,
  CampaignPhase,
  NodeState,
  type WatchCampaignResponse,
  WatchCampaignResponseSchema,
} from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { boolFlag, expectPositionals, formatDuration } from "../args.js";
import { type Command, type Context, ExitError } from "../command.js";
import {
  type Colour,
  messageJsonLine,
  type Painter,
  stripAnsi,
  terminalSequence,
  visibleLength,
} from "../output.js";
import {
  batchPosition,
  batchStateText,
  countOf,
  FINAL_PHASES,
  formatCounts,
  formatFailures,
  phaseName,
  settledCount,
  stopReason,
  thresholdOf,
  timeLeftMs,
} from "./campaign-format.js";
import { createNodeFollower, formatNodeEvent, nodeEventJson } from "./campaign-watch-events.js";
import { lineWorthy, pendingDueMs, type Written } from "./campaign-watch-lines.js";

/** Exit code of a watch whose campaign ended rolled back, aborted or failed. */
export const EXIT_UNSUCCESSFUL = 3;
const BAR_WIDTH = 20;
const MAX_RECONNECTS = 5;

/** A bar of `width` cells: succeeded green, failed red, otherwise settled yellow, the rest dim. */
export function progressBar(batch: BatchStatus, paint: Painter, width = BAR_WIDTH): string {
  const total = Math.max(1, batch.nodeCount);
  const failed =
    countOf(batch.counts, NodeState.FAILED) +
    countOf(batch.counts, NodeState.TIMED_OUT) +
    countOf(batch.counts, NodeState.ROLLBACK_FAILED);
  const succeeded = countOf(batch.counts, NodeState.SUCCEEDED);
  const other = Math.max(0, settledCount(batch.counts) - failed - succeeded);
  const cells = (n: number): number => Math.round((n / total) * width);
  const s = cells(succeeded);
  const f = Math.min(width - s, cells(failed));
  const o = Math.min(width - s - f, cells(other));
  const part = (colour: Colour, char: string, n: number): string =>
    n > 0 ? paint(colour, char.repeat(n)) : "";
  return `[${part("green", "#", s)}${part("red", "x", f)}${part("yellow", "~", o)}${part("dim", "-", width - s - f - o)}]`;
}

function batchTimeLeft(campaign: Campaign, batch: BatchStatus, sinceUpdateMs: number): string {
  if (batch.state !== BatchState.RUNNING) return "";
  const running = campaign.phase === CampaignPhase.RUNNING;
  const left = timeLeftMs(batch, running ? sinceUpdateMs : 0);
  if (left === undefined) return "";
  return left > 0
    ? `${formatDuration(left)} left${running ? "" : " (paused)"}`
    : "min duration reached";
}

/**
 * The lines of one terminal frame: a header, one line per batch, and why the campaign
 * stopped when something stopped it. `sinceUpdateMs` is the time since the update arrived.
 */
export function renderFrame(campaign: Campaign, sinceUpdateMs: number, paint: Painter): string[] {
  const threshold = thresholdOf(campaign);
  const lines = [
    `${paint("bold", `campaign ${campaign.id}`)}  agent ${campaign.spec?.targetVersion ?? "?"}  ${phaseName(campaign.phase)}  batch ${batchPosition(campaign)}  ${campaign.nodeCount} node(s)`,
  ];
  campaign.batches.forEach((b, i) => {
    const current = b.index === campaign.currentBatch ? ">" : " ";
    const settled = `${settledCount(b.counts)}/${b.nodeCount}`.padStart(9);
    const parts = [
      `${current} batch ${String(i + 1).padStart(2)} ${`${b.percent}%`.padStart(4)} ${progressBar(b, paint)}${settled}`,
      batchStateText(b).padEnd(11),
      formatFailures(b, threshold),
      batchTimeLeft(campaign, b, sinceUpdateMs),
      formatCounts(b.counts),
    ];
    lines.push(parts.filter((p) => p !== "").join("  "));
  });
  const reason = stopReason(campaign);
  if (reason !== undefined) lines.push(paint("red", `stopped: ${reason}`));
  return lines;
}

/** The one line printed per update when stdout is not a terminal. */
export function renderLine(campaign: Campaign, now: Date): string {
  const threshold = thresholdOf(campaign);
  const current = campaign.batches.find((b) => b.index === campaign.currentBatch);
  const parts = [
    now.toISOString(),
    `campaign ${campaign.id}`,
    phaseName(campaign.phase),
    `batch ${batchPosition(campaign)}`,
    formatCounts(campaign.counts),
  ];
  if (current !== undefined) {
    const left = batchTimeLeft(campaign, current, 0);
    parts.push(
      `current batch ${formatFailures(current, threshold)}${left === "" ? "" : `, ${left}`}`,
    );
  }
  const reason = stopReason(campaign);
  if (reason !== undefined) parts.push(`stopped: ${reason}`);
  return parts.join("  ");
}

/** 0 for a completed campaign; {@link EXIT_UNSUCCESSFUL} for any other final phase. */
export function exitCodeFor(phase: CampaignPhase): number {
  return phase === CampaignPhase.COMPLETED ? 0 : EXIT_UNSUCCESSFUL;
}

function transient(error: unknown): boolean {
  if (!(error instanceof ConnectError)) return false;
  return [Code.Unavailable, Code.Aborted, Code.Unknown, Code.DeadlineExceeded].includes(error.code);
}

/**
 * Draws frames in place on a terminal (cursor up, clear below), never wider than it; `above`
 * lines (node events) are written once, above the frame, and scroll away as a log does.
 */
function createTerminalDrawer(ctx: Context): (lines: string[], above?: string[]) => void {
  let drawn = 0;
  return (lines, above = []) => {
    // A pseudo-terminal may report 0 columns; fall back to COLUMNS, then 120.
    const width = terminalWidth(ctx.stdout.columns, ctx.env.COLUMNS);
    const fitted = lines.map((l) => (visibleLength(l) > width - 1 ? truncate(l, width - 1) : l));
    const up = drawn > 0 ? terminalSequence(`[${drawn}F`) : "";
    const log = above.map((l) => `${l}\n`).join("");
    ctx.stdout.write(`${up}${terminalSequence("[J")}${log}${fitted.join("\n")}\n`);
    drawn = fitted.length;
  };
}

/** The usable width of the terminal: its column count, else `COLUMNS`, else 120. */
export function terminalWidth(columns: number | undefined, env: string | undefined): number {
  if (columns !== undefined && columns > 0) return columns;
  const fromEnv = Number(env);
  return Number.isInteger(fromEnv) && fromEnv > 0 ? fromEnv : 120;
}

function truncate(line: string, width: number): string {
  // Drop colour before cutting so no escape sequence is split; a cut line is plain.
  const plain = stripAnsi(line);
  return `${plain.slice(0, Math.max(0, width - 1))}…`;
}

/** How `campaign watch` follows a campaign. */
export interface WatchOptions {
  /** Also a line per node that changed state (`--events`). */
  readonly events?: boolean;
}

/**
 * Follows a campaign until it is finished (final phase and every node final), reconnecting
 * after transient failures. On a terminal it redraws a frame in place; otherwise (and with
 * `--json`) it writes a line when {@link lineWorthy} says so (each state change, counts at most
 * once a second, a held-back update once due: {@link pendingDueMs}). With
 * `events`, each node's change is a line of its own. Resolves to the exit code; throws
 * {@link ExitError} (code 3) with the stop reason when the campaign did not complete.
 */
export async function watchCampaign(
  ctx: Context,
  id: string,
  options: WatchOptions = {},
): Promise<number> {
  const json = ctx.output === "json";
  const tty = ctx.stdout.isTTY === true && !json;
  const draw = createTerminalDrawer(ctx);
  let last: Campaign | undefined;
  let receivedAt = 0;
  let status = "";
  let written: Written | undefined;
  const redraw = (above: string[] = []): void => {
    if (last === undefined) return;
    const frame = renderFrame(last, Date.now() - receivedAt, ctx.paint);
    draw(status === "" ? frame : [...frame, ctx.paint("yellow", status)], above);
  };
  const follower = options.events
    ? createNodeFollower(ctx, id, (events) => {
        if (last === undefined) return;
        const campaign = last;
        if (json) {
          for (const e of events) ctx.stdout.write(nodeEventJson(e));
          return;
        }
        const lines = events.map((e) => formatNodeEvent(e, campaign, ctx.now()));
        if (tty) redraw(lines);
        else ctx.stdout.write(`${lines.join("\n")}\n`);
      })
    : undefined;
  const ticker = tty ? setInterval(redraw, 1000) : undefined;
  // Off a terminal: the latest update, written now when worth a line, else once it is due.
  let held: WatchCampaignResponse | undefined;
  let flush: ReturnType<typeof setTimeout> | undefined;
  const writeLine = (): void => {
    if (flush !== undefined) clearTimeout(flush);
    flush = undefined;
    const update = held;
    if (update?.campaign === undefined) return;
    const worthy = lineWorthy(written, update.campaign, ctx.now().getTime());
    if (worthy !== undefined) {
      written = worthy;
      ctx.stdout.write(
        json
          ? messageJsonLine(WatchCampaignResponseSchema, update)
          : `${renderLine(update.campaign, ctx.now())}\n`,
      );
      return;
    }
    const due = pendingDueMs(written, update.campaign);
    if (due !== undefined) {
      flush = setTimeout(writeLine, Math.max(0, due - ctx.now().getTime()));
    }
  };
  let reconnects = 0;
  try {
    for (;;) {
      try {
        for await (const update of (await ctx.clients()).campaigns.watchCampaign(
          { id },
          { signal: ctx.signal },
        )) {
          reconnects = 0;
          status = "";
          if (update.campaign === undefined) continue;
          last = update.campaign;
          receivedAt = Date.now();
          follower?.poke();
          if (tty) redraw();
          else {
            held = update;
            writeLine();
          }
          if (FINAL_PHASES.has(last.phase) && last.finishedAt !== undefined) break;
        }
        if (last !== undefined && FINAL_PHASES.has(last.phase)) break;
        throw new ConnectError(
          "the watch stream ended before the campaign finished",
          Code.Unavailable,
        );
      } catch (error) {
        if (ctx.signal.aborted || !transient(error) || ++reconnects > MAX_RECONNECTS) throw error;
        const waitMs = Math.min(10_000, 500 * 2 ** reconnects);
        status = `connection lost (${error instanceof Error ? error.message : String(error)}); reconnecting in ${formatDuration(waitMs)}`;
        if (tty) redraw();
        else ctx.stderr.write(`${status}\n`);
        await sleep(waitMs, undefined, { signal: ctx.signal });
      }
    }
    if (follower !== undefined) {
      // The nodes' last changes came with the last updates: list once more before exiting.
      follower.poke();
      await follower.settled();
    }
  } finally {
    if (ticker !== undefined) clearInterval(ticker);
    if (flush !== undefined) clearTimeout(flush);
  }
  if (last === undefined) throw new Error("the watch ended without any update");
  const code = exitCodeFor(last.phase);
  if (code !== 0) {
    throw new ExitError(
      code,
      `campaign ${id} ended ${phaseName(last.phase)}${stopReason(last) === undefined ? "" : `: ${stopReason(last)}`}`,
    );
  }
  return 0;
}

/** The `campaign watch` command. */
export const watchCommand: Command = {
  summary: "Follow a campaign's progress live until it finishes",
  args: "ID",
  flags: {
    events: {
      type: "boolean",
      description: "also a line per node that changes state (node, batch, from → to, why)",
    },
  },
  details:
    "On a terminal a frame redrawn in place: one progress bar per batch, the current batch's\n" +
    "time left. Otherwise a line on each change: at once when the phase or a batch's state\n" +
    "changes and when the campaign finishes, and while only the node counts move one line a\n" +
    "second at most (the counts a burst ended on come a second later); with --json\n" +
    "the WatchCampaignResponse (in the tables' words) of each such line, one per line, and with\n" +
    '--events each node change as {"node": CampaignNode, "from": STATE}.\n' +
    "Exit codes: 0 completed, 3 rolled_back/aborted/failed, 130 interrupted (Ctrl-C).",
  async run(ctx, { values, positionals }) {
    const [id = ""] = expectPositionals(positionals, ["ID"]);
    return await watchCampaign(ctx, id, { events: boolFlag(values, "events") });
  },
};
