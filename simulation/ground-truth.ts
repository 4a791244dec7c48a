/**
 * The simulated world's ground truth: what each agent really ran, confirmed, was sent and
 * received, and reported, with the virtual time of each. The outcome invariants judge
 * Control's claims against this record only (never against Control's tables or the engine's
 * functions), as a Jepsen checker reads the history its clients observed.
 */

/** The kinds of operation an agent can be sent. */
export type OperationKind = "upgrade" | "rollback" | "confirm" | "other";

/** One operation as it crossed the network: who sent it, what it asked, and when. */
export interface WireOperation {
  readonly id: string;
  /** The campaign its id names (`CAMPAIGN/NODE/KIND`). */
  readonly campaignId: string;
  readonly kind: OperationKind;
  /** The version it names ("" for a rollback to whatever ran before). */
  readonly version: string;
  readonly sequence: number;
  readonly at: number;
  /** What the agent ran and had confirmed at that moment. */
  readonly agentVersion: string;
  readonly agentConfirmed: number;
}

/** A version the agent started to run (installed on disk, booted on its next start). */
export interface VersionRun {
  readonly version: string;
  readonly at: number;
  /** The sequence of the release as the agent verified it; undefined: the one it was installed with. */
  readonly sequence?: number | undefined;
}

/** One stream the agent opened. */
export interface Connect {
  readonly at: number;
  readonly boot: number;
  readonly version: string;
}

/** One report the agent made on an operation. */
export interface ReportRecord {
  readonly operationId: string;
  /** The proto phase's name (`REFUSED`, `FAILED`, …). */
  readonly phase: string;
  readonly version: string;
  readonly at: number;
}

/**
 * One download the agent really made: from when it began fetching an upgrade's artifact
 * (after its DOWNLOADING report) until its last byte arrived (before VERIFYING) or the agent
 * stopped (a restart, its machine gone); `to` is undefined while it lasts.
 */
export interface DownloadRecord {
  readonly operationId: string;
  readonly campaignId: string;
  readonly from: number;
  to: number | undefined;
}

/** Everything one agent saw and did, in virtual time order. */
export interface AgentRecord {
  readonly initialVersion: string;
  /** Every send Control attempted (the network's view), the failed ones included. */
  readonly sent: WireOperation[];
  /** Every operation that reached the agent (re-deliveries included). */
  readonly received: WireOperation[];
  /** Every version it came to run, the first one included. */
  readonly runs: VersionRun[];
  readonly connects: Connect[];
  readonly reports: ReportRecord[];
  /** When it reported a failed configuration. */
  readonly configFailures: number[];
  /** Every download it made ({@link DownloadRecord}). */
  readonly downloads: DownloadRecord[];
  /** The upgrade operations whose release's health checks failed on it (it reverted them). */
  readonly healthFailures?: string[];
  /** Each DEFERRED answer it gave: the operation and when. */
  readonly deferrals?: { readonly operationId: string; readonly at: number }[];
}

/** A record of an agent that runs `version` at time 0. */
export function newAgentRecord(version: string): AgentRecord {
  return {
    initialVersion: version,
    sent: [],
    received: [],
    runs: [{ version, at: 0 }],
    connects: [],
    reports: [],
    configFailures: [],
    downloads: [],
    healthFailures: [],
    deferrals: [],
  };
}

/** The agent begins downloading the artifact of upgrade `operationId` at `at`. */
export function beginDownload(r: AgentRecord, operationId: string, at: number): void {
  endDownload(r, at);
  r.downloads.push({
    operationId,
    campaignId: campaignOfOperation(operationId),
    from: at,
    to: undefined,
  });
}

/** The agent's download in progress, if any, ends at `at` (done, or the agent stopped). */
export function endDownload(r: AgentRecord, at: number): void {
  const last = r.downloads[r.downloads.length - 1];
  if (last !== undefined && last.to === undefined) last.to = at;
}

/** Splits an operation id `CAMPAIGN/NODE/KIND` into its campaign (which may hold no `/`). */
export function campaignOfOperation(id: string): string {
  const parts = id.split("/");
  return parts.slice(0, Math.max(1, parts.length - 2)).join("/");
}

/** The version the agent ran at time `t` (the last run that began at or before it). */
export function versionAt(r: AgentRecord, t: number): string {
  let v = r.initialVersion;
  for (const run of r.runs) {
    if (run.at > t) break;
    v = run.version;
  }
  return v;
}

/** The first time `id` reached the agent, or undefined. */
export function firstReceived(r: AgentRecord, id: string): number | undefined {
  return r.received.find((o) => o.id === id)?.at;
}

/** The first time Control tried to send `id` to the agent, or undefined. */
export function firstSent(r: AgentRecord, id: string): number | undefined {
  return r.sent.find((o) => o.id === id)?.at;
}

/**
 * Whether the agent ran `previous` at `at`, having opened a stream on it after `since` and by
 * `at`: it was back on its previous release by itself, and had told Control so.
 */
export function backOnBy(r: AgentRecord, previous: string, since: number, at: number): boolean {
  if (versionAt(r, at) !== previous) return false;
  return r.connects.some((c) => c.at > since && c.at <= at && c.version === previous);
}
