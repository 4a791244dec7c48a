/**
 * How campaigns read in a terminal: plans, lists, details and per-batch progress lines.
 * Pure functions of the messages (and `now` where time matters), shared by `campaign`
 * and `campaign watch`.
 */
import { durationMs, type Timestamp, timestampDate, timestampMs } from "@bufbuild/protobuf/wkt";
import { formatLeft } from "../../control/campaign/waits-format.js";
import {
  BatchState,
  BatchStateSchema,
  type BatchStatus,
  type Campaign,
  type CampaignNode,
  CampaignPhase,
  CampaignPhaseSchema,
  type CampaignSpec,
  NodeState,
  type NodeStateCount,
  NodeStateSchema,
  OnBreachSchema,
  type PlanCampaignResponse,
} from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { formatDuration } from "../args.js";
import { idList } from "../id-list.js";
import { enumName, formatFields, formatLabels, formatTable, formatTime } from "../output.js";

/** The default failure threshold Control applies when a campaign does not set one. */
export const DEFAULT_THRESHOLD_PERCENT = 5;

/** Phases after which a campaign never changes phase again. */
export const FINAL_PHASES: ReadonlySet<CampaignPhase> = new Set([
  CampaignPhase.COMPLETED,
  CampaignPhase.ROLLED_BACK,
  CampaignPhase.ABORTED,
  CampaignPhase.FAILED,
]);

/** Node states that never change once set. */
export const FINAL_NODE_STATES: ReadonlySet<NodeState> = new Set([
  NodeState.SUCCEEDED,
  NodeState.FAILED,
  NodeState.TIMED_OUT,
  NodeState.SKIPPED,
  NodeState.CANCELED,
  NodeState.ROLLED_BACK,
  NodeState.ROLLBACK_FAILED,
]);

/** `running`, `rolled_back`, … */
export const phaseName = (phase: CampaignPhase): string => enumName(CampaignPhaseSchema, phase);
/** `waiting`, `timed_out`, … */
export const stateName = (state: NodeState): string => enumName(NodeStateSchema, state);

/** The count for one node state (0 when absent). */
export function countOf(counts: readonly NodeStateCount[], state: NodeState): number {
  return counts.filter((c) => c.state === state).reduce((sum, c) => sum + c.count, 0);
}

/** Nodes in a final state. */
export function settledCount(counts: readonly NodeStateCount[]): number {
  return counts.filter((c) => FINAL_NODE_STATES.has(c.state)).reduce((sum, c) => sum + c.count, 0);
}

/** Non-zero counts as `succeeded=3 applying=1`, in the order of the node states. */
export function formatCounts(counts: readonly NodeStateCount[]): string {
  const text = [...counts]
    .filter((c) => c.count > 0)
    .sort((a, b) => a.state - b.state)
    .map((c) => `${stateName(c.state)}=${c.count}`)
    .join(" ");
  return text === "" ? "-" : text;
}

/** The failure threshold a campaign runs with. */
export function thresholdOf(campaign: Campaign): number {
  return thresholdOfSpec(campaign.spec);
}

/** The failure threshold a spec asks for, Control's default when it names none. */
export function thresholdOfSpec(spec: CampaignSpec | undefined): number {
  return spec?.failureThresholdPercent ?? DEFAULT_THRESHOLD_PERCENT;
}

/**
 * `1/20 failed (5.0% ≤ 5%)`, `2/20 failed (10.0% > 5%)` over the threshold; a batch an operator
 * resumed after its breach says its over-threshold failures were accepted:
 * `13/74 failed (17.6%, over 10%: 13 accepted at resume)`.
 */
export function formatFailures(batch: BatchStatus, threshold: number): string {
  const ratio = batch.offerable > 0 ? (100 * batch.failed) / batch.offerable : 0;
  const breached = ratio > threshold;
  const counted = `${batch.failed}/${batch.offerable} failed`;
  if (breached && batch.acceptedFailures > 0) {
    return `${counted} (${ratio.toFixed(1)}%, over ${threshold}%: ${batch.acceptedFailures} accepted at resume)`;
  }
  return `${counted} (${ratio.toFixed(1)}%${breached ? " >" : " ≤"} ${threshold}%)`;
}

/**
 * A batch's state as the tables print it: `passed`, `running`, …; `passed after resume` (or
 * `running after resume`) once an operator resumed it after a breach, accepting its failures.
 */
export function batchStateText(batch: BatchStatus): string {
  const name = enumName(BatchStateSchema, batch.state);
  const resumed =
    batch.acceptedFailures > 0 &&
    (batch.state === BatchState.PASSED || batch.state === BatchState.RUNNING);
  return resumed ? `${name} after resume` : name;
}

/** The minimum duration left for a batch, counting `sinceUpdateMs` when it is still running. */
export function timeLeftMs(batch: BatchStatus, sinceUpdateMs: number): number | undefined {
  if (batch.minDuration === undefined) return undefined;
  const elapsed = (batch.elapsed === undefined ? 0 : durationMs(batch.elapsed)) + sinceUpdateMs;
  return Math.max(0, durationMs(batch.minDuration) - elapsed);
}

/**
 * Formats a plan: one row per batch (with the failures it tolerates under `threshold` %, and a
 * line when the first batch tolerates none), then skipped and up-to-date nodes, then the
 * estimate and what bounds it.
 */
export function formatPlan(
  version: string,
  plan: PlanCampaignResponse,
  wide: boolean,
  threshold: number = DEFAULT_THRESHOLD_PERCENT,
): string {
  const rows = plan.batches.map((b, i) => {
    const ids = wide || b.nodeIds.length <= 3 ? b.nodeIds : [...b.nodeIds.slice(0, 3), "…"];
    return [
      String(i + 1),
      `${b.percent}%`,
      String(b.nodeIds.length),
      String(b.toleratedFailures),
      b.minDuration === undefined ? "default" : formatDuration(durationMs(b.minDuration)),
      ids.join(",") || "-",
    ];
  });
  const lines = [
    `Plan for agent ${version}: ${plan.totalNodes} node(s) in ${plan.batches.length} batch(es)\n`,
    formatTable(["BATCH", "PERCENT", "NODES", "TOLERATES", "MIN DURATION", "NODES IN ORDER"], rows),
  ];
  const canary = plan.batches[0];
  if (canary !== undefined && canary.nodeIds.length > 0 && canary.toleratedFailures === 0) {
    lines.push(
      `Batch 1 tolerates no failure: its first failed node breaches the ${threshold}% threshold (a larger first batch or a higher --threshold absorbs one)\n`,
    );
  }
  if (plan.unsupportedNodeIds.length > 0) {
    lines.push(
      `${plan.unsupportedNodeIds.length} node(s) lack upgrade.v1 and will be skipped: ${idList(plan.unsupportedNodeIds, wide)}\n`,
    );
  }
  for (const skip of plan.skipped) {
    if (skip.code === "upgrade_unsupported") continue;
    lines.push(
      `${skip.nodeIds.length} node(s) will be skipped ${skip.code} (${skip.message}): ${idList(skip.nodeIds, wide)}\n`,
    );
  }
  if (plan.upToDateNodeIds.length > 0) {
    lines.push(
      `${plan.upToDateNodeIds.length} node(s) already run ${version}: ${idList(plan.upToDateNodeIds, wide)}\n`,
    );
  }
  if (plan.yankedPreviousNodeIds.length > 0) {
    lines.push(
      `warning: ${plan.yankedPreviousNodeIds.length} node(s) run a yanked release; a breach would not roll them back onto it (rollback_withheld), they would stay on ${version}: ${idList(plan.yankedPreviousNodeIds, wide)}\n`,
    );
  }
  const estimate = formatEstimate(plan);
  if (estimate !== undefined) lines.push(estimate);
  return lines.join("");
}

const utc = (t: Timestamp): string =>
  `${timestampDate(t).toISOString().slice(0, 16).replace("T", " ")} UTC`;

/**
 * The plan's duration estimate in one line, when Control sent one: shortest to longest, and
 * when it would end if started now; then, in one more line, what bounds it (Control's words).
 */
export function formatEstimate(plan: PlanCampaignResponse): string | undefined {
  const { earliestEnd, latestEnd, plannedAt } = plan;
  if (earliestEnd === undefined || latestEnd === undefined || plannedAt === undefined)
    return undefined;
  const from = timestampMs(plannedAt);
  const shortest = formatLeft(timestampMs(earliestEnd) - from);
  const longest = formatLeft(timestampMs(latestEnd) - from);
  const span = shortest === longest ? shortest : `${shortest} to ${longest}`;
  const ends = shortest === longest ? utc(earliestEnd) : `${utc(earliestEnd)} to ${utc(latestEnd)}`;
  const line = `Estimated duration: ${span} if started now, ending ${ends} (from nodes back at once to each taking its whole reconnect timeout; failures, gates and other campaigns' load not counted)\n`;
  return plan.estimateBounds.length === 0
    ? line
    : `${line}Bounded by: ${plan.estimateBounds.join("; ")}\n`;
}

/** `2/3` for the batch being run, by position among the campaign's batches. */
export function batchPosition(campaign: Campaign): string {
  const position = campaign.batches.findIndex((b) => b.index === campaign.currentBatch);
  return `${position < 0 ? "-" : position + 1}/${campaign.batches.length}`;
}

/** Formats campaigns as the `campaign list` table. */
export function formatCampaignTable(campaigns: readonly Campaign[]): string {
  return formatTable(
    ["ID", "PHASE", "VERSION", "BATCH", "NODES", "SUCCEEDED", "FAILED", "CREATED", "BY"],
    campaigns.map((c) => [
      c.id,
      phaseName(c.phase),
      c.spec?.targetVersion ?? "-",
      batchPosition(c),
      String(c.nodeCount),
      String(countOf(c.counts, NodeState.SUCCEEDED)),
      String(countOf(c.counts, NodeState.FAILED) + countOf(c.counts, NodeState.TIMED_OUT)),
      formatTime(c.createdAt),
      c.createdBy || "-",
    ]),
  );
}

/** Why a campaign stopped, as one line, or undefined while nothing stopped it. */
export function stopReason(campaign: Campaign): string | undefined {
  if (campaign.code === "" && campaign.message === "") return undefined;
  const by =
    campaign.stoppedByNodeId === "" ? "" : ` (stopped by node ${campaign.stoppedByNodeId})`;
  const text = [campaign.code, campaign.message].filter((s) => s !== "").join(": ");
  return `${text}${by}`;
}

/** Formats the batches of a campaign as a table. */
export function formatBatchTable(campaign: Campaign): string {
  const threshold = thresholdOf(campaign);
  return formatTable(
    ["BATCH", "PERCENT", "STATE", "NODES", "FAILURES", "ELAPSED/MIN", "COUNTS"],
    campaign.batches.map((b, i) => [
      String(i + 1),
      `${b.percent}%`,
      batchStateText(b),
      String(b.nodeCount),
      formatFailures(b, threshold),
      `${b.elapsed === undefined ? "-" : formatDuration(durationMs(b.elapsed))}/${b.minDuration === undefined ? "-" : formatDuration(durationMs(b.minDuration))}`,
      formatCounts(b.counts),
    ]),
  );
}

/**
 * Formats the node rows of a campaign; `wide` adds pool, times and operation ids. Batches
 * are numbered from 1 by their position in `campaign`, as in the batch table.
 */
export function formatCampaignNodes(
  campaign: Campaign,
  nodes: readonly CampaignNode[],
  wide: boolean,
): string {
  const position = (index: number): string => {
    const at = campaign.batches.findIndex((b) => b.index === index);
    return at < 0 ? String(index) : String(at + 1);
  };
  const header = ["NODE", "BATCH", "STATE", "VERSION", "CODE", "MESSAGE"];
  if (wide) header.push("PREVIOUS", "POOL", "OFFERED", "FINISHED", "OPERATION");
  return formatTable(
    header,
    nodes.map((n) => {
      const row = [
        n.nodeId,
        position(n.batch),
        // A final node sent the rollback keeps its state; its rollback's outcome is beside it.
        n.rollbackResult ? `${stateName(n.state)} (${n.rollbackResult})` : stateName(n.state),
        n.version || "-",
        n.code || "-",
        n.message || "-",
      ];
      if (wide) {
        row.push(
          n.previousVersion || "-",
          n.pool || "-",
          formatTime(n.offeredAt),
          formatTime(n.finishedAt),
          n.operationId || "-",
        );
      }
      return row;
    }),
  );
}

/** The summary block of `campaign show`. */
export function formatCampaignSummary(campaign: Campaign, wide = false): string {
  const spec = campaign.spec;
  const selector = spec?.selector;
  const exclude = spec?.exclude;
  return formatFields([
    ["Campaign", campaign.id],
    ["Phase", phaseName(campaign.phase)],
    ["Target", `${spec?.targetVersion ?? "-"} (sequence ${campaign.targetSequence})`],
    ["Batch", batchPosition(campaign)],
    ["Nodes", `${campaign.nodeCount}: ${formatCounts(campaign.counts)}`],
    [
      "Threshold",
      `${thresholdOf(campaign)}%, on breach ${spec === undefined ? "-" : enumName(OnBreachSchema, spec.onBreach)}`,
    ],
    [
      "Selector",
      selector === undefined
        ? ""
        : describeSelector(selector.labels, selector.pools, selector.nodeIds, wide),
    ],
    [
      "Exclude",
      exclude === undefined ? "" : describeSelector(exclude.tags, [], exclude.nodeIds, wide),
    ],
    ...paceFields(spec),
    ...scheduleFields(spec),
    ["Stopped", stopReason(campaign) ?? ""],
    ["Reason", spec?.reason ?? ""],
    ["Created", `${formatTime(campaign.createdAt)} by ${campaign.createdBy || "-"}`],
    ["Finished", formatTime(campaign.finishedAt)],
    ["Retry of", campaign.retryOf],
  ]);
}

/**
 * How fast a campaign goes and how long it waits for a node, as `campaign show` rows: Control
 * stores them resolved (its defaults filled in), so a dash means a spec that lacks one.
 */
function paceFields(spec: Campaign["spec"]): [string, string][] {
  const duration = (d: Parameters<typeof durationMs>[0] | undefined) =>
    d === undefined ? "-" : formatDuration(durationMs(d));
  const soak = spec?.soak;
  const budget = spec?.disruptionBudgetPercent;
  return [
    ["Reconnect timeout", duration(spec?.reconnectTimeout)],
    ["Config grace", duration(spec?.configGrace)],
    ["Soak", soak === undefined || duration(soak) === "0s" ? "none" : duration(soak)],
    [
      "Concurrency",
      spec?.concurrency ? `${spec.concurrency} nodes in flight at most` : "the whole batch",
    ],
    ["Disruption budget", budget === undefined ? "-" : `${budget}% of each pool`],
  ];
}

/**
 * The windows, ramp, failure budget, minimum sample and gates of a spec, as `campaign show`
 * rows (none when unset).
 */
function scheduleFields(spec: Campaign["spec"]): [string, string][] {
  if (spec === undefined) return [];
  const rows: [string, string][] = [];
  if (spec.windows.length > 0) rows.push(["Windows", spec.windows.join("; ")]);
  const r = spec.ramp;
  if (r !== undefined) {
    const rate = (perMinute: number) => `${Math.round(perMinute * 1000) / 1000}/min`;
    const step = r.step ? `, steps of ${Number(r.step.seconds)} s` : "";
    const max = r.maxPerMinute > 0 ? `, max ${rate(r.maxPerMinute)}` : "";
    rows.push(["Ramp", `${rate(r.startPerMinute)} ×${r.factor}${max}${step}`]);
  }
  const budget = spec.maxFailures;
  if (budget.case !== undefined) {
    const text =
      budget.case === "maxFailuresCount"
        ? `${budget.value} failed nodes over every batch`
        : `${budget.value}% of the campaign's nodes over every batch`;
    rows.push(["Max failures", text]);
  }
  if (spec.minCanaries > 0)
    rows.push(["Min canaries", `${spec.minCanaries} nodes settled per batch before it passes`]);
  if (spec.maxDownloads > 0)
    rows.push(["Max downloads", `${spec.maxDownloads} nodes downloading at once`]);
  if (spec.maxDefer !== undefined)
    rows.push(["Max defer", `${formatDuration(durationMs(spec.maxDefer))} per node, then skipped`]);
  if (spec.gates.length > 0) {
    const grace = spec.gateGrace
      ? ` (unreachable fails after ${Number(spec.gateGrace.seconds)} s)`
      : "";
    rows.push(["Gates", `${spec.gates.join("; ")}${grace}`]);
  }
  return rows;
}

function describeSelector(
  labels: Record<string, string>,
  pools: string[],
  nodeIds: string[],
  wide: boolean,
): string {
  const parts: string[] = [];
  if (Object.keys(labels).length > 0) parts.push(`labels ${formatLabels(labels)}`);
  if (pools.length > 0) parts.push(`pools ${pools.join(",")}`);
  if (nodeIds.length > 0) parts.push(`nodes ${idList(nodeIds, wide)}`);
  return parts.join("; ");
}
