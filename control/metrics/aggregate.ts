/**
 * The one exposition of a `--workers` process group: every worker's series combined by each
 * metric's `aggregator` (see {@link Aggregation}), with prom-client's `AggregatorRegistry`.
 */
import { AggregatorRegistry, type MetricObjectWithValues, type MetricValue } from "prom-client";

/** One registry's series as `Registry.getMetricsAsJSON()` gives them (and IPC carries them). */
export type RegistryScrape = MetricObjectWithValues<MetricValue<string>>[];

/**
 * The Prometheus text of `scrapes` (one per worker, and any of the primary's own) combined:
 * a series present in several is aggregated by its metric's `aggregator` (default `sum`), a
 * series present in one is taken as it is. A value JSON could not carry (NaN, ±Infinity
 * arrive as null) is read as NaN.
 */
export async function aggregateScrapes(scrapes: readonly RegistryScrape[]): Promise<string> {
  const readable = scrapes.map((metrics) =>
    metrics.map((metric) => ({
      ...metric,
      values: metric.values.map((v) => ({ ...v, value: v.value ?? Number.NaN })),
    })),
  );
  return await AggregatorRegistry.aggregate(readable).metrics();
}
