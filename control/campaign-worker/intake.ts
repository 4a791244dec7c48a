/**
 * Agent events → decision facts. Reports (`ObservedState`) and failed `ConfigStatus` are
 * buffered in memory and written in batched statements by {@link EventIntake.flush}, which
 * the worker runs before each decision pass; heartbeats never write.
 *
 * Nothing an Agent sends can crash Control or touch another node: a report is kept only when
 * its operation id names the reporting node and a known kind (`campaignId/nodeId/kind`), and
 * the write matches it against the outbox row of that id AND node, so unknown ids and other
 * nodes' operations change nothing (logged at debug).
 *
 * Every Control runs an intake for the agents connected to it. A failed config status names no
 * campaign: the campaign is the one the worker decides the node in, and on a Control that does
 * not lead (it decides none) the newest unfinished campaign that includes the node, asked of
 * the store when written. After each write the facts are announced (the leader marks them
 * stale and their campaigns due).
 */
import { OperationPhase } from "../../proto/gen/agentcontrol/v1/agent_control_pb.js";
import type { AgentEvent, ConnectedNode } from "../agents/events.js";
import type { ObservedPhase } from "../campaign/index.js";
import type { CampaignStore } from "../campaign-store/index.js";
import type { Logger } from "../log.js";

const KINDS = new Set(["upgrade", "rollback", "confirm"]);
const MAX_TEXT = 1024;

interface PendingReport {
  id: string;
  nodeId: string;
  phase: ObservedPhase;
  code: string;
  message: string;
  version: string;
  at: Date;
  bootId: string | null;
}

interface PendingConfigFailure {
  /** Undefined until the store says which campaign the node belongs to. */
  campaignId: string | undefined;
  nodeId: string;
  at: Date;
  bootId: string | null;
  message: string;
}

/** The campaign an operation id belongs to, when it is well-formed and names `nodeId`. */
export function campaignOfOperation(operationId: string, nodeId: string): string | undefined {
  const parts = operationId.split("/");
  if (parts.length !== 3) return undefined;
  const [campaignId, opNode, kind] = parts as [string, string, string];
  if (campaignId === "" || opNode !== nodeId || !KINDS.has(kind)) return undefined;
  return campaignId;
}

/** The engine's name of a wire phase; undefined for UNSPECIFIED or unknown values. */
export function phaseName(phase: OperationPhase): ObservedPhase | undefined {
  switch (phase) {
    case OperationPhase.ACCEPTED:
      return "ACCEPTED";
    case OperationPhase.REFUSED:
      return "REFUSED";
    case OperationPhase.DOWNLOADING:
      return "DOWNLOADING";
    case OperationPhase.VERIFYING:
      return "VERIFYING";
    case OperationPhase.APPLYING:
      return "APPLYING";
    case OperationPhase.RESTARTING:
      return "RESTARTING";
    case OperationPhase.FAILED:
      return "FAILED";
    case OperationPhase.REINSTATED:
      return "REINSTATED";
    case OperationPhase.CONFIRMED:
      return "CONFIRMED";
    case OperationPhase.DEFERRED:
      return "DEFERRED";
    default:
      return undefined;
  }
}

/** Options of {@link EventIntake}. */
export interface EventIntakeOptions {
  /**
   * Where facts are written; with `liveCampaignOfNodes`, a config failure of a node
   * `campaignOfNode` does not know is written for the node's newest unfinished campaign
   * (without it, such a failure is dropped).
   */
  readonly store: Pick<CampaignStore, "recordFacts"> &
    Partial<Pick<CampaignStore, "liveCampaignOfNodes">>;
  readonly log: Logger;
  /** The live campaign a node belongs to, if any. */
  readonly campaignOfNode: (nodeId: string) => string | undefined;
  /** The node's current boot id (for config failures). */
  readonly bootIdOf: (nodeId: string) => string | undefined;
  /** Called for each event that concerns a campaign (the worker marks it due). */
  readonly touched: (campaignId: string) => void;
  /** Called when a node's stream was welcomed (the worker re-sends its operations). */
  readonly connected: (nodeId: string, node: ConnectedNode) => void;
  /** Called after a flush wrote a fact of `nodeId` in `campaignId` (its copy is stale). */
  readonly written?: (campaignId: string, nodeId: string) => void;
  /**
   * Called once after each write with every (campaign, node) it wrote facts of, each once
   * (the worker tells the leader). A failure is logged; the facts stay written.
   */
  readonly announce?: (
    facts: readonly { readonly campaignId: string; readonly nodeId: string }[],
  ) => Promise<void>;
}

/** Buffers agent events that are decision facts, and writes them in batches. */
export class EventIntake {
  private reports = new Map<string, PendingReport>();
  private configFailures: PendingConfigFailure[] = [];
  private writing: Promise<void> = Promise.resolve();

  constructor(private readonly options: EventIntakeOptions) {}

  /** Handles one hub event; never throws. */
  readonly handle = (event: AgentEvent): void => {
    const o = this.options;
    switch (event.kind) {
      case "observed": {
        const { observed, nodeId } = event;
        const campaignId = campaignOfOperation(observed.operationId, nodeId);
        const phase = phaseName(observed.phase);
        if (campaignId === undefined || phase === undefined) {
          o.log.debug(
            { nodeId, operationId: observed.operationId.slice(0, 200) },
            "ignored a report on an operation that is not this node's",
          );
          return;
        }
        this.reports.set(observed.operationId, {
          id: observed.operationId,
          nodeId,
          phase,
          code: observed.code.slice(0, MAX_TEXT),
          message: observed.message.slice(0, MAX_TEXT),
          version: observed.version.slice(0, 128),
          at: event.at,
          bootId: o.bootIdOf(nodeId) ?? null,
        });
        o.touched(campaignId);
        return;
      }
      case "config_status": {
        if (event.ok) return;
        const campaignId = o.campaignOfNode(event.nodeId);
        if (campaignId === undefined && o.store.liveCampaignOfNodes === undefined) return;
        this.configFailures.push({
          campaignId,
          nodeId: event.nodeId,
          at: event.at,
          bootId: o.bootIdOf(event.nodeId) ?? null,
          message: event.message.slice(0, MAX_TEXT),
        });
        if (campaignId !== undefined) o.touched(campaignId);
        return;
      }
      case "connected": {
        o.connected(event.node.nodeId, event.node);
        const campaignId = o.campaignOfNode(event.node.nodeId);
        if (campaignId !== undefined) o.touched(campaignId);
        return;
      }
      case "disconnected": {
        const campaignId = o.campaignOfNode(event.nodeId);
        if (campaignId !== undefined) o.touched(campaignId);
        return;
      }
      default:
        return;
    }
  };

  /** True when reports or config failures wait to be written. */
  get pending(): boolean {
    return this.reports.size > 0 || this.configFailures.length > 0;
  }

  /**
   * Runs `work` between flushes, never alongside one: for other writes to the outbox rows
   * reports land on (a concurrent multi-row update of the same rows could deadlock).
   */
  exclusive<T>(work: () => Promise<T>): Promise<T> {
    const next = this.writing.then(work);
    this.writing = next.then(
      () => {},
      () => {},
    );
    return next;
  }

  /** Writes everything buffered so far; resolves once written (flushes run one at a time). */
  flush(): Promise<void> {
    const reports = [...this.reports.values()];
    const failures = this.configFailures;
    this.reports = new Map();
    this.configFailures = [];
    const next = this.writing.then(() => this.write(reports, failures));
    this.writing = next.catch(() => {});
    return next;
  }

  private async write(reports: PendingReport[], failures: PendingConfigFailure[]): Promise<void> {
    if (reports.length === 0 && failures.length === 0) return;
    const facts = new Map<string, { campaignId: string; nodeId: string }>();
    try {
      const resolved = await this.resolve(failures);
      await this.options.store.recordFacts(reports, resolved);
      for (const r of reports) {
        const campaignId = campaignOfOperation(r.id, r.nodeId);
        if (campaignId !== undefined)
          facts.set(`${campaignId}/${r.nodeId}`, { campaignId, nodeId: r.nodeId });
      }
      for (const f of resolved)
        facts.set(`${f.campaignId}/${f.nodeId}`, { campaignId: f.campaignId, nodeId: f.nodeId });
    } catch (error) {
      // Keep them for the next flush; newer reports of the same operation win.
      for (const r of reports) if (!this.reports.has(r.id)) this.reports.set(r.id, r);
      this.configFailures = failures.concat(this.configFailures);
      throw error;
    }
    const { written, announce, log } = this.options;
    if (written !== undefined) for (const f of facts.values()) written(f.campaignId, f.nodeId);
    if (announce !== undefined && facts.size > 0) {
      await announce([...facts.values()]).catch((error: unknown) =>
        log.warn({ err: (error as Error).message }, "could not announce written facts"),
      );
    }
  }

  /** The config failures with their campaign; those of nodes in no live campaign are dropped. */
  private async resolve(failures: readonly PendingConfigFailure[]) {
    const unknown = failures.filter((f) => f.campaignId === undefined).map((f) => f.nodeId);
    const found =
      unknown.length === 0 ? undefined : await this.options.store.liveCampaignOfNodes?.(unknown);
    const out: (PendingConfigFailure & { campaignId: string })[] = [];
    for (const f of failures) {
      const campaignId = f.campaignId ?? found?.get(f.nodeId);
      if (campaignId !== undefined) out.push({ ...f, campaignId });
    }
    return out;
  }
}
