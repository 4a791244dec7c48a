/**
 * The Prometheus registry of one Control: prom-client's default process and Node.js
 * collectors, `agent_control_build_info`, and the counters and gauges the rest of Control
 * declares through {@link ControlMetrics.counter} and {@link ControlMetrics.gauge}.
 *
 * Each Control owns a registry of its own (never prom-client's global one), so several
 * Controls in one process (the tests, the simulation) count apart and never collide.
 */
import { type Aggregator, Counter, collectDefaultMetrics, Gauge, Registry } from "prom-client";
import { buildInfo } from "./build-info.js";

/** Label values of one series. */
export type Labels = Readonly<Record<string, string>>;

/** A counter whose series are chosen by labels declared up front. */
export interface CounterHandle {
  /** Adds `by` (default 1) to the series of `labels` (default: the unlabelled one). */
  inc(labels?: Labels, by?: number): void;
}

/**
 * How often the default collectors sample the event loop's delay (prom-client's default is
 * 10 ms). The sampler is a repeating timer: every 10 ms it woke an idle Control 100 times a
 * second, about 10 ms of CPU per second with no agent traffic. Each sample is the time
 * between two runs of the timer, so `nodejs_eventloop_lag_*` read this period plus the
 * delay (about 0.1 s when idle): a stall shows as what exceeds it, and the dashboard's lag
 * panel subtracts it.
 */
export const EVENT_LOOP_SAMPLE_MS = 100;

/**
 * How a series is combined over the workers of one `--workers` process group when one scrape
 * answers for all of them (prom-client's `aggregator`): `sum` for what each worker holds or
 * counts (counters, histograms, streams), `max` for what any worker may say for the group
 * (`agent_control_is_leader`, the leader-only series) or all say alike (the fleet gauges read
 * from the one database), `min` for the soonest of a deadline every worker reads alike.
 */
export type Aggregation = Extract<Aggregator, "sum" | "max" | "min">;

/**
 * The whole process group's scrape, which a `--workers` worker answers with instead of its
 * own (control/metrics/cluster-scrape.ts).
 */
export interface GroupScrape {
  /** The group's exposition text, or undefined when the group cannot answer now. */
  scrape(): Promise<string | undefined>;
}

/** Every series of one Control, rendered on each scrape of `/metrics`. */
export class ControlMetrics {
  /**
   * The prom-client registry: for metrics of a kind `counter` and `gauge` do not cover (give
   * each its `aggregator` where `sum` is wrong; see {@link Aggregation}).
   */
  readonly registry = new Registry();
  private group: GroupScrape | undefined;

  /** Registers the default collectors and `agent_control_build_info`. */
  constructor() {
    collectDefaultMetrics({
      register: this.registry,
      eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS,
    });
    const info = buildInfo();
    new Gauge({
      name: "agent_control_build_info",
      help: "Always 1; the labels say which Control build and Node.js runtime serve.",
      labelNames: ["version", "node_version"],
      aggregator: "max",
      registers: [this.registry],
    }).set({ version: info.version, node_version: info.nodeVersion }, 1);
  }

  /**
   * Declares a counter (`name` ends in `_total`); series of `labelNames` appear once
   * incremented, and those of `preset` start at 0 so a rate over them exists from the start.
   */
  counter(
    name: string,
    help: string,
    labelNames: readonly string[] = [],
    preset: readonly Labels[] = [],
  ): CounterHandle {
    const counter = new Counter({
      name,
      help,
      labelNames: [...labelNames],
      registers: [this.registry],
    });
    for (const labels of preset) counter.inc(labels, 0);
    return {
      inc: (labels, by = 1) => (labels ? counter.inc(labels, by) : counter.inc(by)),
    };
  }

  /**
   * Declares an unlabelled gauge whose value is read from `read` at each scrape; a process
   * group's scrape combines the workers' values by `aggregation` (default `sum`: what each
   * worker holds).
   */
  gauge(name: string, help: string, read: () => number, aggregation: Aggregation = "sum"): void {
    new Gauge({
      name,
      help,
      aggregator: aggregation,
      registers: [this.registry],
      collect() {
        this.set(read());
      },
    });
  }

  /** The content type of {@link ControlMetrics.render}'s text. */
  get contentType(): string {
    return this.registry.contentType;
  }

  /**
   * From now on {@link ControlMetrics.render} answers with `group`'s scrape (a `--workers`
   * worker answers for its whole process group), and with this Control's own series only
   * when the group cannot answer.
   */
  answerFor(group: GroupScrape): void {
    this.group = group;
  }

  /** The Prometheus text exposition of every series (of the group, see `answerFor`), now. */
  async render(): Promise<string> {
    const text = await this.group?.scrape();
    return text ?? (await this.registry.metrics());
  }
}
