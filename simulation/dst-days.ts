/**
 * Daylight-saving days in maintenance windows. For a share of the seeds, the run's virtual
 * clock starts 20–35 minutes before the wall clock of a zone first shows the hour that one of
 * 2026's changes skips or repeats (New York, Berlin, Lord Howe's half hour; {@link DST_CHANGES}),
 * and every campaign with windows (`schedules.ts`) that no takeover times gets, instead of its
 * UTC ones, daily windows in that zone:
 *
 * - one span that opens before that hour and closes inside it (in a skipped hour, a closing
 *   edge the wall clock never shows; in a repeated one, an edge it shows twice);
 * - a span of 60–120 minutes every fourth hour of the day, from the first whole hour after the
 *   change, each after the change or ending well before that span, so a run still finishes in
 *   virtual time;
 * - the first such campaign's first batch must stay inside the windows for longer than the
 *   time left before the change (so it runs across it and its minimum duration decides its pass).
 *
 * W1 and W2 judge these windows by the Intl minute scan of `reference/windows.ts`. Every time
 * of the scenario is shifted by the new origin ({@link Scenario.originMs}). Drawn from a seed
 * stream of its own, so the rest of a seed's scenario is the same with or without it.
 */
import { createPrng, deriveSeed, type Prng } from "../agent-sim/prng.js";
import type { MaintenanceWindow } from "../control/campaign/index.js";
import type { FleetScenario } from "./rollout-scenario.js";
import type { CampaignPlan } from "./scenario.js";

const MIN = 60_000;
/** The share of the seeds with a campaign with windows that run on a DST day. */
const SHARE = 0.12;

/** One change of a zone's offset in 2026. */
export interface DstChange {
  readonly zone: string;
  /** The instant the offset changes (epoch ms). */
  readonly at: number;
  /** `gap`: the wall clock skips [lo, hi); `repeat`: it shows [lo, hi) twice. */
  readonly kind: "gap" | "repeat";
  /** The local minutes of the day the skipped or repeated span begins and ends at. */
  readonly lo: number;
  readonly hi: number;
}

/** 2026's changes the scenarios start on. */
export const DST_CHANGES: readonly DstChange[] = [
  { zone: "America/New_York", at: Date.UTC(2026, 2, 8, 7), kind: "gap", lo: 120, hi: 180 },
  { zone: "America/New_York", at: Date.UTC(2026, 10, 1, 6), kind: "repeat", lo: 60, hi: 120 },
  { zone: "Europe/Berlin", at: Date.UTC(2026, 2, 29, 1), kind: "gap", lo: 120, hi: 180 },
  { zone: "Europe/Berlin", at: Date.UTC(2026, 9, 25, 1), kind: "repeat", lo: 120, hi: 180 },
  { zone: "Australia/Lord_Howe", at: Date.UTC(2026, 9, 3, 15, 30), kind: "gap", lo: 120, hi: 150 },
  { zone: "Australia/Lord_Howe", at: Date.UTC(2026, 3, 4, 15), kind: "repeat", lo: 90, hi: 120 },
];

/** The instant the zone's wall clock first reaches the change's `lo` (jumps past it, in a gap). */
export function firstReachesLo(c: DstChange): number {
  return c.kind === "gap" ? c.at : c.at - (c.hi - c.lo) * MIN;
}

function int(prng: Prng, lo: number, hi: number): number {
  return lo + Math.floor(prng.next() * (hi - lo + 1));
}

/** The daily windows of a DST day around `c` (see the file's TSDoc). */
export function dstWindows(prng: Prng, c: DstChange): MaintenanceWindow[] {
  const days = [0, 1, 2, 3, 4, 5, 6];
  const from = int(prng, 10, 30);
  const open = int(prng, 60, 120);
  const start = c.lo - int(prng, 40, 55);
  const end = c.lo + int(prng, 5, c.hi - c.lo - 5);
  const out: MaintenanceWindow[] = [{ days, startMinute: start, endMinute: end, timeZone: c.zone }];
  // Every fourth hour from the first whole hour after the change: few windows, as the engine's
  // cost grows with their number in a zone with offsets (each change reads every window).
  const after = Math.ceil(c.hi / 60);
  for (let h = after % 4; h < 24; h += 4) {
    const s = h * 60 + from;
    if (s + open < 1440 && (s >= c.hi || s + open <= start - 5))
      out.push({ days, startMinute: s, endMinute: s + open, timeZone: c.zone });
  }
  return out;
}

/** Every time of `s` moved `by` later (its relative times, such as gate faults', stay). */
function shifted(s: FleetScenario, by: number): FleetScenario {
  const r = s.rollout;
  return {
    ...s,
    agents: s.agents.map((a) => ({
      ...a,
      onlineAt: a.onlineAt + by,
      ...(a.busyUntil === undefined ? {} : { busyUntil: a.busyUntil + by }),
    })),
    campaigns: s.campaigns.map((c) => ({ ...c, at: c.at + by })),
    operator: s.operator.map((o) => ({ ...o, at: o.at + by })),
    faults: s.faults.map((f) => ({ ...f, at: f.at + by })),
    yanks: s.yanks?.map((y) => ({ ...y, at: y.at + by })),
    rollout: {
      ...r,
      settleUntil: r.settleUntil + by,
      backwards:
        r.backwards === undefined ? undefined : { ...r.backwards, at: r.backwards.at + by },
      plan: r.plan === undefined ? undefined : { ...r.plan, at: r.plan.at + by },
    },
    originMs: (s.originMs ?? 0) + by,
  };
}

/** Whether another scenario part times `c` itself (a takeover across its gate or soak). */
function timedElsewhere(s: FleetScenario, c: CampaignPlan): boolean {
  return (
    (s.gateFaults ?? []).some((f) => f.campaignId === c.id) || s.soakTakeover?.campaignId === c.id
  );
}

/** `s` on a DST day for a share of its seeds (the file's TSDoc); otherwise `s` itself. */
export function withDstDays(s: FleetScenario): FleetScenario {
  if (s.edge || s.campaigns.length === 0) return s;
  const prng = createPrng(deriveSeed(s.seed, 32));
  if (prng.next() >= SHARE) return s;
  const change = DST_CHANGES[Math.floor(prng.next() * DST_CHANGES.length)] as DstChange;
  const leadMin = int(prng, 20, 35);
  const windows = dstWindows(prng, change);
  const firstMinMs = (leadMin + int(prng, 5, 25)) * MIN;
  const first = s.campaigns.find((c) => c.spec.windows !== undefined && !timedElsewhere(s, c));
  if (first === undefined) return s;
  const campaigns = s.campaigns.map((c) => {
    if (c.spec.windows === undefined || timedElsewhere(s, c)) return c;
    const batches =
      c === first && c.spec.batches !== undefined
        ? c.spec.batches.map((b, k) => (k === 0 ? { ...b, minDurationMs: firstMinMs } : b))
        : c.spec.batches;
    return { ...c, spec: { ...c.spec, windows, batches } };
  });
  return shifted({ ...s, campaigns }, firstReachesLo(change) - leadMin * MIN);
}
