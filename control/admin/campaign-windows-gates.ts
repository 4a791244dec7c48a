/**
 * The campaign page's view of a campaign's maintenance windows (open now, when they close and
 * next open) and of its gates (each with its latest result for the current batch and its
 * grace), as CampaignWaitsService answers them beside the waits.
 */
import { create } from "@bufbuild/protobuf";
import { durationFromMs, timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  type GateState,
  GateStateSchema,
  type WindowState,
  WindowStateSchema,
} from "../../proto/gen/agentcontrol/admin/v1/campaign_waits_pb.js";
import {
  type CampaignSpec,
  DEFAULT_GATE_GRACE_MS,
  type GateResult,
  gateFails,
  type MaintenanceWindow,
  nextWindowChange,
  redactedGateText,
  windowOpen,
} from "../campaign/index.js";

const at = (ms: number) => timestampFromDate(new Date(ms));

/**
 * Whether `windows` are open at `now`, when they close (while open) and when they next open
 * (while closed: the coming opening; while open: the one after the coming close). Undefined
 * without windows.
 */
export function windowStateOf(
  windows: readonly MaintenanceWindow[] | undefined,
  now: number,
): WindowState | undefined {
  if (windows === undefined || windows.length === 0) return undefined;
  const open = windowOpen(windows, now);
  const change = nextWindowChange(windows, now);
  if (!open) {
    return create(WindowStateSchema, {
      open,
      ...(change === undefined ? {} : { nextOpensAt: at(change) }),
    });
  }
  const reopens = change === undefined ? undefined : nextWindowChange(windows, change);
  return create(WindowStateSchema, {
    open,
    ...(change === undefined ? {} : { closesAt: at(change) }),
    ...(reopens === undefined ? {} : { nextOpensAt: at(reopens) }),
  });
}

/** Every gate of `spec` with its latest result among `results` (the current batch's). */
export function gateStatesOf(
  spec: Pick<CampaignSpec, "gates" | "gateGraceMs">,
  results: readonly GateResult[],
  now: number,
): GateState[] {
  const grace = spec.gateGraceMs ?? DEFAULT_GATE_GRACE_MS;
  return (spec.gates ?? []).map((g, index) => {
    const r = results
      .filter((x) => x.gate === index)
      .reduce<GateResult | undefined>(
        (a, b) => (a === undefined || b.at > a.at ? b : a),
        undefined,
      );
    return create(GateStateSchema, {
      index,
      text: redactedGateText(g),
      grace: durationFromMs(grace),
      ...(r === undefined
        ? {}
        : {
            status: r.status,
            value: r.value,
            message: r.message,
            at: at(r.at),
            failing: gateFails(r, grace, now),
            ...(r.unreachableSince === undefined
              ? {}
              : { unreachableSince: at(r.unreachableSince) }),
          }),
    });
  });
}
