/**
 * Writes what Agents report of their TUF metadata (the hub's `trust_status` events) to the
 * node registry, where `agentctl node show|list`, the dashboard and the
 * `agent_control_nodes_trust_frozen` gauge read it. Every Agent reports once after its first
 * Welcome, so a fleet reconnecting at once would otherwise queue one statement per node on
 * the pool its handshakes need: at most `maxInFlight` writes run at a time, and of the reports
 * of one node waiting meanwhile only the latest is kept (it is the node's state now). A failed
 * write is logged; the next report of that node writes again.
 */
import type { Clock } from "../clock.js";
import { scheduleOnce } from "../clock-timer.js";
import type { NodeTrust } from "../db/node-trust.js";
import type { Logger } from "../log.js";
import type { AgentEvent } from "./events.js";

/** Options of {@link trustRecorder}. */
export interface TrustRecorderOptions {
  /** Writes one node's trust state; true when its row changed. */
  readonly record: (trust: NodeTrust) => Promise<boolean>;
  readonly log: Logger;
  /** Writes running at once (default 2). */
  readonly maxInFlight?: number;
}

/** A hub listener (see the file's TSDoc) and a way to wait for its writes. */
export interface TrustRecorder {
  readonly onEvent: (event: AgentEvent) => void;
  /** Resolves once every report received so far has been written (or failed). */
  settled(): Promise<void>;
  /**
   * {@link TrustRecorder.settled}, bounded by `ms` of `clock`'s time (shutdown's grace): true
   * when every report received so far was written (or failed) in time, false when the grace
   * ran out first. Writes still running then are abandoned, never awaited further, so a hung
   * statement cannot hold shutdown past its grace. Leaves no timer behind either way.
   */
  settledWithin(clock: Clock, ms: number): Promise<boolean>;
}

/** Creates the recorder; subscribe its `onEvent` to the hub. */
export function trustRecorder(options: TrustRecorderOptions): TrustRecorder {
  const maxInFlight = options.maxInFlight ?? 2;
  /** Reports not started yet, latest per node, in arrival order of their nodes. */
  const waiting = new Map<string, NodeTrust>();
  /** Nodes with a write in flight (a node's writes never overlap). */
  const writing = new Set<string>();
  let idle: Array<() => void> = [];

  const write = async (trust: NodeTrust) => {
    try {
      if (await options.record(trust)) {
        const frozen = trust.frozenSince !== null;
        options.log.info(
          { nodeId: trust.nodeId, frozen, since: trust.frozenSince, reason: trust.reason },
          frozen ? "node reports its TUF metadata frozen" : "node reports its TUF metadata current",
        );
      }
    } catch (error) {
      options.log.warn(
        { nodeId: trust.nodeId, err: (error as Error).message },
        "could not record a node's trust status",
      );
    }
  };

  const pump = () => {
    for (const [nodeId, trust] of waiting) {
      if (writing.size >= maxInFlight) break;
      if (writing.has(nodeId)) continue;
      waiting.delete(nodeId);
      writing.add(nodeId);
      void write(trust).finally(() => {
        writing.delete(nodeId);
        pump();
      });
    }
    if (writing.size === 0 && waiting.size === 0) {
      const done = idle;
      idle = [];
      for (const resolve of done) resolve();
    }
  };

  const settled = (): Promise<void> => {
    if (writing.size === 0 && waiting.size === 0) return Promise.resolve();
    return new Promise((resolve) => idle.push(resolve));
  };

  return {
    onEvent(event) {
      if (event.kind !== "trust_status") return;
      waiting.delete(event.nodeId);
      waiting.set(event.nodeId, {
        nodeId: event.nodeId,
        frozenSince: event.frozen ? event.since : null,
        reason: event.reason,
      });
      pump();
    },
    settled,
    settledWithin(clock, ms) {
      return new Promise<boolean>((resolve) => {
        const timer = scheduleOnce(clock, ms, () => resolve(false));
        void settled().then(() => {
          timer.cancel();
          resolve(true);
        });
      });
    },
  };
}
