/**
 * What the Agent holds from Control: operations waiting their turn are bounded in number and
 * in bytes, so no Control, hostile or broken, can grow the Agent's memory by sending faster
 * than it applies. Beyond the bound an operation is refused: not queued and not remembered
 * (Control's at-least-once delivery offers it again on a later stream, and it is then handled
 * afresh), with one log line per interval however many are refused.
 */
import { toBinary } from "@bufbuild/protobuf";
import { type Operation, OperationSchema } from "../proto/gen/agentcontrol/v1/agent_control_pb.js";
import { reportOf } from "./core/durable-state.js";
import type { AgentLog } from "./core/log.js";
import { deliverOperation, type OperationHost } from "./core/operations.js";

/** The bounds of what the Agent holds from Control. */
export interface OperationLimits {
  /** Operations queued or running at once. */
  readonly maxQueued: number;
  /** Their bytes (as on the wire) together. */
  readonly maxQueuedBytes: number;
}

/**
 * 64 operations, 8 MiB: a Control sends a node one operation at a time (a campaign's offer,
 * then its confirm or rollback), and one operation is at most 4 MiB (the stream's limit).
 */
export const DEFAULT_OPERATION_LIMITS: OperationLimits = Object.freeze({
  maxQueued: 64,
  maxQueuedBytes: 8 * 1024 * 1024,
});

/** The bytes of `op` as Control sent them (its protobuf encoding, unknown fields included). */
export function operationBytes(op: Operation): number {
  return toBinary(OperationSchema, op).byteLength;
}

/** Options of an {@link OperationBudget}. */
export interface OperationBudgetOptions {
  readonly limits?: OperationLimits;
  readonly log: AgentLog;
  /** Milliseconds of a clock (default `Date.now`). */
  readonly now?: () => number;
  /** At most one refusal line per this many ms (default 60 000). */
  readonly logEveryMs?: number;
}

/** Counts what is queued and admits an operation only within the limits. */
export class OperationBudget {
  readonly #limits: OperationLimits;
  readonly #log: AgentLog;
  readonly #now: () => number;
  readonly #logEveryMs: number;
  #queued = 0;
  #queuedBytes = 0;
  #refused = 0;
  #refusedSinceLine = 0;
  #lastLineAt: number | undefined;

  constructor(options: OperationBudgetOptions) {
    this.#limits = options.limits ?? DEFAULT_OPERATION_LIMITS;
    this.#log = options.log;
    this.#now = options.now ?? Date.now;
    this.#logEveryMs = options.logEveryMs ?? 60_000;
  }

  /** Operations admitted and not finished. */
  get queued(): number {
    return this.#queued;
  }
  /** Their bytes. */
  get queuedBytes(): number {
    return this.#queuedBytes;
  }
  /** Operations refused since the start. */
  get refused(): number {
    return this.#refused;
  }

  /**
   * Admits `op` when it fits: returns the release to call once it is finished (exactly once).
   * Undefined when it does not fit: it is refused (counted, logged at most once per interval).
   */
  admit(op: Operation): (() => void) | undefined {
    const bytes = operationBytes(op);
    const { maxQueued, maxQueuedBytes } = this.#limits;
    if (this.#queued + 1 > maxQueued || this.#queuedBytes + bytes > maxQueuedBytes) {
      this.#refuse(op, bytes);
      return undefined;
    }
    this.#queued++;
    this.#queuedBytes += bytes;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#queued--;
      this.#queuedBytes -= bytes;
    };
  }

  #refuse(op: Operation, bytes: number): void {
    this.#refused++;
    this.#refusedSinceLine++;
    const now = this.#now();
    if (this.#lastLineAt !== undefined && now - this.#lastLineAt < this.#logEveryMs) return;
    this.#lastLineAt = now;
    this.#log.warn(
      {
        opId: op.id.slice(0, 64),
        bytes,
        queued: this.#queued,
        queuedBytes: this.#queuedBytes,
        maxQueued: this.#limits.maxQueued,
        maxQueuedBytes: this.#limits.maxQueuedBytes,
        refusedSinceLastLine: this.#refusedSinceLine,
        everyMs: this.#logEveryMs,
      },
      "refusing operations from Control: too many queued (they are redelivered later)",
    );
    this.#refusedSinceLine = 0;
  }
}

/**
 * Takes one operation from Control: one already handled is answered as before (nothing is
 * queued); a new one is delivered when `budget` admits it and refused otherwise (not queued,
 * not remembered). Resolves once it is finished. Never rejects.
 */
export function receiveOperation(
  host: OperationHost,
  budget: OperationBudget,
  op: Operation,
): Promise<void> {
  if (reportOf(host.state, op.id) !== undefined) return deliverOperation(host, op);
  const release = budget.admit(op);
  if (release === undefined) return Promise.resolve();
  return deliverOperation(host, op).finally(release);
}
