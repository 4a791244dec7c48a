/**
 * `npm run bench -- --resume`: what a download costs on a poor link. A 20 MiB artifact on a
 * plain HTTP mirror (`static-mirror.ts`, in this process) is fetched with the Agent's own
 * download code through a TCP proxy that closes every connection after 2 MiB
 * (`cutting-proxy.ts`), three runs of each:
 *
 * - **resumed**: the Agent's download (`downloadResumable`, its bytes kept in a download area
 *   on disk), which continues each cut with `Range`;
 * - **not resumed**: one GET at a time from byte 0 (`fetchArtifact`, the Agent before
 *   downloads resumed), tried again as many times as the resumed run sent requests; it never
 *   completes, since no connection carries 20 MiB;
 * - **uncut**: the Agent's download through the same proxy without cuts (the baseline).
 *
 * The figure is bytes the proxy forwarded / artifact size. A few seconds; writes nothing under
 * docs/ (docs/BENCHMARKS.md records the figures by hand). Exits 1 when a resumed run went
 * beyond 1.1× or did not complete.
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_DOWNLOAD_POLICY, fetchArtifact } from "../../agent/core/download.js";
import { downloadResumable } from "../../agent/core/download-resume.js";
import { startCuttingProxy } from "./cutting-proxy.js";
import { startStaticMirror } from "./static-mirror.js";

const MIB = 1024 * 1024;

/** What {@link runResumeBench} measures. */
export interface ResumePlan {
  readonly sizeBytes: number;
  readonly cutBytes: number;
  readonly runs: number;
}

/** The default: 20 MiB cut every 2 MiB, three runs. */
export const RESUME_PLAN: ResumePlan = { sizeBytes: 20 * MIB, cutBytes: 2 * MIB, runs: 3 };

/** The bound of a resumed download's bytes transferred / size. */
export const RESUME_MAX_RATIO = 1.1;

/** One download through the proxy. */
export interface ResumeMeasure {
  readonly mode: "resumed" | "not resumed" | "uncut";
  readonly run: number;
  readonly completed: boolean;
  /** Bytes the proxy forwarded / artifact size. */
  readonly ratio: number;
  readonly requests: number;
  readonly seconds: number;
}

/** Runs the three modes `plan.runs` times each; see the file's TSDoc. */
export async function runResumeBench(
  plan: ResumePlan,
  say: (text: string) => void,
): Promise<ResumeMeasure[]> {
  const bytes = randomBytes(plan.sizeBytes);
  const sha256 = createHash("sha256").update(bytes).digest("hex");
  const mirror = await startStaticMirror(new Map([["/artifact", bytes]]));
  const upstream = new URL(mirror.url).host;
  const signal = new AbortController().signal;
  const measures: ResumeMeasure[] = [];
  try {
    for (let run = 1; run <= plan.runs; run++) {
      for (const mode of ["resumed", "not resumed", "uncut"] as const) {
        const cutAfterBytes = mode === "uncut" ? Number.POSITIVE_INFINITY : plan.cutBytes;
        const proxy = await startCuttingProxy({ upstream, cutAfterBytes });
        const url = `${proxy.url}/artifact`;
        const area = await mkdtemp(join(tmpdir(), "agent-control-resume-"));
        const started = performance.now();
        let completed = false;
        try {
          if (mode === "not resumed") {
            // As many tries from byte 0 as the resumed download of this run sent requests.
            const tries = measures.find((m) => m.run === run && m.mode === "resumed")?.requests;
            for (let i = 0; i < (tries ?? 11) && !completed; i++) {
              const result = await fetchArtifact(
                url,
                plan.sizeBytes,
                DEFAULT_DOWNLOAD_POLICY,
                signal,
              );
              completed = result.ok && result.artifact.sha256 === sha256;
            }
          } else {
            const result = await downloadResumable(
              {
                url,
                size: plan.sizeBytes,
                sha256,
                policy: DEFAULT_DOWNLOAD_POLICY,
                partialDir: area,
              },
              signal,
            );
            completed = result.ok && result.artifact.sha256 === sha256;
          }
        } finally {
          await proxy.close();
          await rm(area, { recursive: true, force: true });
        }
        const measure: ResumeMeasure = {
          mode,
          run,
          completed,
          ratio: proxy.bytesForwarded() / plan.sizeBytes,
          requests: proxy.connections.reduce((n, c) => n + c.requests.length, 0),
          seconds: (performance.now() - started) / 1000,
        };
        measures.push(measure);
        say(
          `resume run ${run}, ${mode}: ${completed ? "completed" : "did not complete"}, ${measure.ratio.toFixed(4)}× in ${measure.requests} requests, ${measure.seconds.toFixed(2)} s`,
        );
      }
    }
  } finally {
    await mirror.close();
  }
  return measures;
}

/** A Markdown table of `measures`, one row per mode and run. */
export function resumeTable(plan: ResumePlan, measures: readonly ResumeMeasure[]): string {
  const lines = [
    `${plan.sizeBytes / MIB} MiB from a plain HTTP mirror through a proxy closing every connection after ${plan.cutBytes / MIB} MiB (uncut: no cuts).`,
    "",
    "| run | mode | completed | bytes transferred / size | requests | seconds |",
    "|---|---|---|---|---|---|",
  ];
  for (const m of measures) {
    lines.push(
      `| ${m.run} | ${m.mode} | ${m.completed ? "yes" : "no"} | ${m.ratio.toFixed(4)}× | ${m.requests} | ${m.seconds.toFixed(2)} |`,
    );
  }
  return lines.join("\n");
}

/** True when every resumed run completed within {@link RESUME_MAX_RATIO}. */
export function resumeMet(measures: readonly ResumeMeasure[]): boolean {
  return measures
    .filter((m) => m.mode === "resumed")
    .every((m) => m.completed && m.ratio <= RESUME_MAX_RATIO);
}

/** `npm run bench -- --resume`: runs {@link RESUME_PLAN}, prints the table; 0 when met. */
export async function resumeOnly(say: (text: string) => void): Promise<number> {
  const measures = await runResumeBench(RESUME_PLAN, say);
  process.stdout.write(`\n${resumeTable(RESUME_PLAN, measures)}\n`);
  return resumeMet(measures) ? 0 : 1;
}
