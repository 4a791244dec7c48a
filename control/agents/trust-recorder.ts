/**
 * Writes what Agents report of their TUF metadata (the hub's `trust_status` events) to the
 * node registry, where `agentctl node show|list`, the dashboard and the
 * `agent_control_nodes_trust_frozen` gauge read it. Reports of one node are written in
 * order, one at a time; a failed write is logged (the Agent repeats a frozen state after
 * every Welcome, and a change at once).
 */
import type { NodeTrust } from "../db/node-trust.js";
import type { Logger } from "../log.js";
import type { AgentEvent } from "./events.js";

/** Options of {@link trustRecorder}. */
export interface TrustRecorderOptions {
  /** Writes one node's trust state; true when its row changed. */
  readonly record: (trust: NodeTrust) => Promise<boolean>;
  readonly log: Logger;
}

/** A hub listener (see the file's TSDoc) and a way to wait for the writes it started. */
export interface TrustRecorder {
  readonly onEvent: (event: AgentEvent) => void;
  /** Resolves once every write started so far has ended. */
  settled(): Promise<void>;
}

/** Creates the recorder; subscribe its `onEvent` to the hub. */
export function trustRecorder(options: TrustRecorderOptions): TrustRecorder {
  const chains = new Map<string, Promise<void>>();
  return {
    onEvent(event) {
      if (event.kind !== "trust_status") return;
      const trust: NodeTrust = {
        nodeId: event.nodeId,
        frozenSince: event.frozen ? event.since : null,
        reason: event.reason,
      };
      const previous = chains.get(event.nodeId) ?? Promise.resolve();
      const next = previous
        .then(() => options.record(trust))
        .then(
          (changed) => {
            if (changed) {
              options.log.info(
                {
                  nodeId: trust.nodeId,
                  frozen: event.frozen,
                  since: event.since,
                  reason: trust.reason,
                },
                event.frozen
                  ? "node reports its TUF metadata frozen"
                  : "node reports its TUF metadata current",
              );
            }
          },
          (error: unknown) => {
            options.log.warn(
              { nodeId: trust.nodeId, err: (error as Error).message },
              "could not record a node's trust status",
            );
          },
        )
        .finally(() => {
          if (chains.get(trust.nodeId) === next) chains.delete(trust.nodeId);
        });
      chains.set(event.nodeId, next);
    },
    async settled() {
      await Promise.all([...chains.values()]);
    },
  };
}
