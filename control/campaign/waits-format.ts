/**
 * The sentence an operator reads for each {@link Wait} (`agentctl campaign why`, the dashboard,
 * the admin API's `text` field). Pure: times are formatted in the window's time zone or UTC.
 */
import { assertNever } from "./assert-never.js";
import { gateResultText } from "./gates.js";
import type { Wait } from "./waits.js";

/**
 * A duration as a person reads it, rounded up: "40 s", "90 s", "12 min", "2 h 5 min". Never "0 s" for
 * time still left (under a second reads "1 s").
 */
export function formatLeft(ms: number): string {
  const s = Math.max(0, Math.ceil(ms / 1000));
  if (s < 120) return `${s} s`;
  const min = Math.ceil(s / 60);
  if (min < 120) return `${min} min`;
  const h = Math.floor(min / 60);
  const rest = min % 60;
  return rest === 0 ? `${h} h` : `${h} h ${rest} min`;
}

/** "Mon 02:00 Europe/Berlin": a weekday and wall-clock time in `timeZone`. */
export function formatAt(at: number, timeZone: string): string {
  const text = new Intl.DateTimeFormat("en-GB", {
    weekday: "short",
    hour: "2-digit",
    minute: "2-digit",
    hourCycle: "h23",
    timeZone,
  }).format(new Date(at));
  return `${text.replace(",", "")} ${timeZone}`;
}

const nodes = (n: number): string => `${n} node${n === 1 ? "" : "s"}`;

/** The one-line sentence for `w`. */
export function formatWait(w: Wait): string {
  switch (w.kind) {
    case "ended":
      return `nothing: the campaign has ended ${w.phase}`;
    case "finishing":
      return `nothing new: the campaign ended ${w.phase}; ${nodes(w.inFlight)} still finishing on their own`;
    case "paused":
      return `paused${w.by === "" ? "" : ` by ${w.by}`} at ${formatAt(w.at, "UTC")}${w.reason === "" ? "" : `: ${w.reason}`}`;
    case "rolling_back":
      return `rolling back: ${nodes(w.pending)} not yet confirmed back on their previous version`;
    case "window_closed":
      return w.opensAt === undefined
        ? "window closed: no window opens again"
        : `window closed: opens ${formatAt(w.opensAt, w.timeZone)}`;
    case "upgrading":
      return `${nodes(w.count)} upgrading, reconnect timeout ${formatLeft(w.deadlineLeftMs)} left`;
    case "verifying":
      return `${nodes(w.count)} verifying, config grace ${formatLeft(w.graceLeftMs)} left`;
    case "concurrency":
      return `concurrency: ${w.inFlight} of ${w.limit} in flight`;
    case "download_budget":
      return `download budget: ${w.downloading} of ${w.limit} downloading (max downloads)`;
    case "pool_budget":
      return `pool budget: ${w.inFlight} of ${w.limit} in flight in pool ${w.pool === "" ? "(none)" : w.pool}`;
    case "disconnected":
      return `${nodes(w.count)} to offer not connected (offered when back, skipped once offline)`;
    case "to_offer":
      return `${nodes(w.count)} to offer at the next decision`;
    case "deferred":
      return `${nodes(w.count)} deferred (busy), offered again in ${formatLeft(w.nextOfferLeftMs)} at the soonest, skipped once past max defer`;
    case "min_duration":
      return `minimum duration: ${formatLeft(w.leftMs)} left`;
    case "soak":
      return `soak: ${formatLeft(w.leftMs)} left`;
    case "gate_pending":
      return `${w.label}: no result since the batch settled yet`;
    case "gate_unreachable":
      return `${w.label} unreachable for ${formatLeft(w.forMs)} of its ${formatLeft(w.graceMs)} grace (value ${w.value})`;
    case "gate_failing":
      return `${w.label} failing: ${gateResultText(w.message, w.value)}; the batch breaches at the next decision`;
    case "next_decision":
      return "nothing: the batch passes at the next decision";
    default:
      return assertNever(w, "wait");
  }
}
