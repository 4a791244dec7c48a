/**
 * A real Agent's operation handling without a stream: the protocol core with the real
 * applier on a real install directory, its reports recorded, its downloads answered from
 * memory (counted), its restart only noted. For tests of what the Agent accepts and applies.
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type AgentState, saveState } from "../../../agent/agent-state.js";
import type { DownloadResult } from "../../../agent/core/download.js";
import type { ReportedState } from "../../../agent/core/durable-state.js";
import type { AgentLog } from "../../../agent/core/log.js";
import type { OperationHost, RestartKind } from "../../../agent/core/operations.js";
import { ReleaseVerifier } from "../../../agent/core/release-check.js";
import {
  type InstallPaths,
  installPaths,
  installVersion,
  switchCurrent,
} from "../../../agent/install-dir.js";
import { realApplier } from "../../../agent/real-applier.js";
import { sha256Hex } from "../../../control/shared/release/index.js";

/** One log entry. */
export interface LogLine {
  readonly level: string;
  readonly fields: object;
  readonly msg: string;
}

/** A logger that keeps what it is told. */
export function recordingLog(): AgentLog & { readonly lines: LogLine[] } {
  const lines: LogLine[] = [];
  const at =
    (level: string) =>
    (fields: object, msg: string): void => {
      lines.push({ level, fields, msg });
    };
  return { lines, info: at("info"), warn: at("warn"), error: at("error"), debug: at("debug") };
}

/** The host, what it reported and fetched, and its install directory. */
export interface TestAgentHost {
  readonly host: OperationHost;
  readonly paths: InstallPaths;
  readonly state: AgentState;
  readonly log: ReturnType<typeof recordingLog>;
  readonly reports: { opId: string; report: ReportedState }[];
  readonly fetched: string[];
  readonly restarts: RestartKind[];
}

/**
 * An install directory holding `installed` (each a tiny artifact), `current` at
 * `state.version`, and a host over it that trusts `pins`; `bytes` answers downloads by URL.
 */
export async function testAgentHost(options: {
  readonly state: AgentState;
  readonly installed: readonly string[];
  readonly pins: readonly string[];
  readonly bytes?: ReadonlyMap<string, Uint8Array>;
  readonly platform?: string;
  /** Answers downloads instead of `bytes` (e.g. one that never ends). */
  readonly fetch?: OperationHost["fetch"];
}): Promise<TestAgentHost> {
  const root = await mkdtemp(join(tmpdir(), "agent-host-"));
  const paths = installPaths(root);
  for (const version of options.installed) {
    await installVersion(paths, version, new TextEncoder().encode(`// ${version}\n`));
  }
  const state = options.state;
  await saveState(paths, state);
  await switchCurrent(paths, state.version);
  const log = recordingLog();
  const reports: TestAgentHost["reports"] = [];
  const fetched: string[] = [];
  const restarts: RestartKind[] = [];
  const persist = () => saveState(paths, state);
  let queue: Promise<void> = Promise.resolve();
  const stop = new AbortController();
  const host: OperationHost = {
    platform: options.platform ?? "linux-amd64",
    state,
    signal: stop.signal,
    log,
    trust: { verifier: new ReleaseVerifier(), pins: options.pins, threshold: 1 },
    stepMs: 0,
    applier: realApplier({ paths, state, log, persist }),
    busy: false,
    restarting: false,
    fetch(artifact, signal): Promise<DownloadResult> {
      fetched.push(artifact.url);
      const answer = options.fetch?.(artifact, signal);
      if (answer !== undefined) return answer;
      const bytes = options.bytes?.get(artifact.url);
      if (bytes === undefined) {
        return Promise.resolve({ ok: false, code: "download_failed", message: "not served" });
      }
      return Promise.resolve({ ok: true, artifact: { bytes, sha256: sha256Hex(bytes) } });
    },
    send(opId, report) {
      reports.push({ opId, report });
    },
    persist,
    countApplication() {},
    countDuplicate() {},
    restart(kind) {
      restarts.push(kind);
    },
    enqueue(task) {
      const next = queue.then(task);
      queue = next;
      return next;
    },
  };
  return { host, paths, state, log, reports, fetched, restarts };
}
