/**
 * What the bandwidth scenario (`downloads.ts`) measures, and how it is reported: a Markdown
 * table with one row per campaign, and `reports/bench/downloads.json` (ignored by git).
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { ROOT } from "./processes.js";

const MB = 1024 * 1024;

/** The scenario's settings. */
export interface DownloadsPlan {
  readonly agents: number;
  readonly sizeBytes: number;
  readonly maxDownloads: number;
  readonly simulators: number;
  readonly timeoutMs: number;
}

/** What one campaign measured. */
export interface DownloadsMeasure {
  readonly source: string;
  readonly completed: boolean;
  readonly seconds: number;
  readonly controlCpuSeconds: number;
  /** Control's CPU per one-second sample, in cores. */
  readonly controlCores: { readonly median: number; readonly p90: number; readonly max: number };
  readonly controlRssBeforeMb: number;
  readonly controlRssPeakMb: number;
  readonly mirrorCpuSeconds: number | undefined;
  readonly mirrorRssPeakMb: number | undefined;
  /** Bytes the agents fetched, in GB (agents × size). */
  readonly gigabytes: number;
  /** Artifact GETs the source answered 200 (Control's counter, nginx's access log). */
  readonly fetches: number | undefined;
  /** Failed nodes by the Agent's code (download_too_slow, download_failed, …). */
  readonly failures: Readonly<Record<string, number>>;
  /** Up to eight distinct failure messages (the artifact's URL left out), for the reasons. */
  readonly failureMessages: readonly string[];
}

const fixed = (n: number | undefined, digits = 1) => (n === undefined ? "—" : n.toFixed(digits));

const failedText = (f: Readonly<Record<string, number>>) =>
  Object.entries(f)
    .map(([code, n]) => `${n} ${code}`)
    .join(", ") || "0";

/** The measures as Markdown table rows (one per campaign). */
export function downloadsTable(plan: DownloadsPlan, measures: readonly DownloadsMeasure[]): string {
  const head = [
    `${plan.agents} agents × ${(plan.sizeBytes / MB).toFixed(0)} MiB, --max-downloads ${plan.maxDownloads}`,
    "",
    "| source | completed | failed nodes | artifact GETs answered | time (s) | Control CPU (s) | Control cores per s (median / p90 / max) | Control RSS before → peak (MB) | mirror CPU (s) | mirror RSS peak (MB) |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
  ];
  const rows = measures.map(
    (m) =>
      `| ${m.source} | ${m.completed ? "yes" : "no"} | ${failedText(m.failures)} | ${m.fetches ?? "—"} | ${fixed(m.seconds)} | ${fixed(m.controlCpuSeconds)} | ${fixed(m.controlCores.median, 2)} / ${fixed(m.controlCores.p90, 2)} / ${fixed(m.controlCores.max, 2)} | ${fixed(m.controlRssBeforeMb, 0)} → ${fixed(m.controlRssPeakMb, 0)} | ${fixed(m.mirrorCpuSeconds)} | ${fixed(m.mirrorRssPeakMb, 0)} |`,
  );
  return [...head, ...rows, ""].join("\n");
}

/** Writes the measures to `reports/bench/downloads.json` (ignored by git). */
export async function writeDownloadsReport(
  plan: DownloadsPlan,
  measures: readonly DownloadsMeasure[],
): Promise<string> {
  const outDir = join(ROOT, "reports", "bench");
  await mkdir(outDir, { recursive: true });
  const file = join(outDir, "downloads.json");
  await writeFile(
    file,
    `${JSON.stringify({ at: new Date().toISOString(), plan, measures }, null, 2)}\n`,
  );
  return file;
}
