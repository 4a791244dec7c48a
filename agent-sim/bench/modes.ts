/**
 * The benchmark's two modes: `--quick` (CI, N = 1,000, bounded ratios) and the full run whose
 * table is the record (N = 1k/5k/10k, campaigns, the bare server's storms).
 */
import type { FleetLoadPlan } from "./fleet-load.js";
import type { StormBounds } from "./rows.js";

/** Settings of one mode. */
export interface Mode {
  readonly name: "quick" | "full";
  readonly plan: Omit<FleetLoadPlan, "logDir" | "stormDowntimeMs">;
  readonly bounds: StormBounds & { memory: number; cpu: number };
  /** The handshake bursts: agents, and the quick-mode floor of their rate ratio. */
  readonly handshakes: { readonly agents: number; readonly minRatio: number };
  /** Storms against the bare server, with the downtime of Control's first. */
  readonly bareStorms: number;
  readonly dbRows: number;
  readonly singles: number;
  /** Fleet sizes of the campaign tick scenario, and the quick-mode bound of its ratio. */
  readonly ticks: {
    readonly sizes: readonly number[];
    readonly repeats: number;
    readonly bound?: number;
  };
}

export const QUICK: Mode = {
  name: "quick",
  plan: {
    levels: [1000],
    heartbeatScale: 0.1,
    // Five windows after 5 s of settling: the first window after 2 s ran up to 1.8× the next
    // two on both servers (warm-up), and with three windows one busy window set the median.
    settleMs: 5000,
    cpuWindows: 5,
    cpuWindowMs: 6000,
    storms: 1,
    connectRate: 1000,
    levelTimeoutMs: 60_000,
  },
  // Margins over the goals (1.3×, 1.5×) for N = 1,000 on a shared 2-core box: fixed
  // costs (JIT code, pools) weigh more per stream at 1,000 and CPU windows are short. The
  // storm is bounded against the bare server's with the same downtime: its peak-to-mean is
  // the agents' jittered backoff and is reported only.
  bounds: { memory: 1.6, cpu: 2.0, stormReadyToAll: 2.0 },
  // A margin under the 0.5× goal: a burst of 1,000 on a shared two-core box is noisy.
  handshakes: { agents: 1000, minRatio: 0.35 },
  bareStorms: 1,
  dbRows: 1000,
  singles: 200,
  // The tick is cheap to seed at 10k; a shared 2-core box needs a margin over the 2× goal.
  ticks: { sizes: [10_000], repeats: 3, bound: 3 },
};

export const FULL: Mode = {
  name: "full",
  plan: {
    levels: [1000, 5000, 10_000],
    heartbeatScale: 1,
    settleMs: 8000,
    cpuWindows: 3,
    cpuWindowMs: 20_000,
    storms: 3,
    // Growth is not what is measured: a gentler rate keeps Control's accept queue (511,
    // grpc-js does not let it be set) from overflowing into 30 s welcome timeouts.
    connectRate: 500,
    levelTimeoutMs: 360_000,
  },
  bounds: { memory: 1.3, cpu: 1.5, stormPeakToMean: 3 },
  handshakes: { agents: 5000, minRatio: 0.5 },
  bareStorms: 3,
  dbRows: 10_000,
  singles: 1000,
  ticks: { sizes: [10_000, 100_000], repeats: 5 },
};
