/**
 * A small Prometheus text exposition: counters and gauges registered by name, rendered on
 * each scrape. Gauges are read from callbacks so nothing needs updating on the hot path.
 */

type Labels = Readonly<Record<string, string>>;

interface Series {
  readonly help: string;
  readonly type: "counter" | "gauge";
  readonly values: Map<string, number>;
  readonly read?: () => number;
}

/** A registry of metrics for `/metrics`. */
export class Metrics {
  private readonly series = new Map<string, Series>();

  /** Declares a counter; `inc` adds to it. */
  counter(name: string, help: string): { inc(labels?: Labels, by?: number): void } {
    const series = this.declare(name, help, "counter");
    return {
      inc: (labels = {}, by = 1) => {
        const key = labelKey(labels);
        series.values.set(key, (series.values.get(key) ?? 0) + by);
      },
    };
  }

  /** Declares a gauge read from `read` at scrape time. */
  gauge(name: string, help: string, read: () => number): void {
    this.series.set(name, { help, type: "gauge", values: new Map(), read });
  }

  /** The Prometheus text format of every series. */
  render(): string {
    const lines: string[] = [];
    for (const [name, series] of this.series) {
      lines.push(`# HELP ${name} ${series.help}`, `# TYPE ${name} ${series.type}`);
      if (series.read) {
        lines.push(`${name} ${format(series.read())}`);
        continue;
      }
      if (series.values.size === 0) lines.push(`${name} 0`);
      for (const [key, value] of series.values) lines.push(`${name}${key} ${format(value)}`);
    }
    return `${lines.join("\n")}\n`;
  }

  private declare(name: string, help: string, type: "counter" | "gauge"): Series {
    const existing = this.series.get(name);
    if (existing) return existing;
    const series: Series = { help, type, values: new Map() };
    this.series.set(name, series);
    return series;
  }
}

function labelKey(labels: Labels): string {
  const entries = Object.entries(labels);
  if (entries.length === 0) return "";
  const body = entries
    .sort(([a], [b]) => a.localeCompare(b))
    .map(
      ([k, v]) => `${k}="${v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`,
    )
    .join(",");
  return `{${body}}`;
}

function format(value: number): string {
  return Number.isFinite(value) ? String(value) : "NaN";
}
