/**
 * `sendAll`, the leader's send of a decision's operations: every operation is queued in
 * order, the queued ones are stamped once, nodes without a stream here are named once, and a
 * large fan-out gives the event loop a turn after every 1,000 sends (not after every send, so
 * the reports and Hellos that arrive meanwhile cannot stretch a 2,500-offer send into seconds).
 */
import { describe, expect, it } from "vitest";
import type { AgentEventListener, ConnectedNode } from "../../../control/agents/events.js";
import type { EncodedOperation } from "../../../control/agents/operation-frame.js";
import type { Outgoing } from "../../../control/campaign-store/index.js";
import { sendAll } from "../../../control/campaign-worker/outbox.js";
import { createLogger } from "../../../control/log.js";

const log = createLogger({ level: "silent" });

/** A gateway holding the streams of `live`; it records every send. */
function gateway(live: (nodeId: string) => boolean) {
  const sent: string[] = [];
  return {
    sent,
    send(nodeId: string, operation: EncodedOperation): boolean {
      if (!live(nodeId)) return false;
      sent.push(operation.id);
      return true;
    },
    connected: (nodeId: string) => (live(nodeId) ? ({ nodeId } as ConnectedNode) : undefined),
    subscribe: (_listener: AgentEventListener) => () => {},
  };
}

function outgoing(count: number, node = (i: number) => `n${i}`): Outgoing[] {
  return Array.from({ length: count }, (_, i) => ({
    nodeId: node(i),
    operation: { id: `op-${i}`, bytes: new Uint8Array([i % 256]) },
  }));
}

describe("sendAll", () => {
  it("queues every operation in order, stamps the queued ones once and names each unreachable node once", async () => {
    const stamps: { ids: readonly string[]; at: Date }[] = [];
    const streams = gateway((nodeId) => nodeId !== "n1");
    const now = new Date(1_000_000);
    const ops = [
      ...outgoing(3),
      { nodeId: "n1", operation: { id: "op-again", bytes: new Uint8Array() } },
    ];
    const result = await sendAll(
      { markSent: async (ids, at) => void stamps.push({ ids, at }) },
      streams,
      ops,
      now,
      log,
    );
    expect(streams.sent).toEqual(["op-0", "op-2"]);
    expect(stamps).toEqual([{ ids: ["op-0", "op-2"], at: now }]);
    expect(result).toEqual({ queued: 2, unreachable: ["n1"] });
  });

  it("gives the event loop a turn after every 1,000 sends of a large fan-out", async () => {
    const streams = gateway(() => true);
    const seenAtTurns: number[] = [];
    let probing = true;
    const probe = () => {
      seenAtTurns.push(streams.sent.length);
      if (probing) setImmediate(probe);
    };
    setImmediate(probe);
    await sendAll({ markSent: async () => {} }, streams, outgoing(2500), new Date(0), log);
    probing = false;
    expect(streams.sent).toHaveLength(2500);
    // The turns the loop had while sending: after the first thousand and the second.
    expect(seenAtTurns.filter((n) => n > 0 && n < 2500)).toEqual([1000, 2000]);
  });

  it("never lets a failed stamp reject: the operations are queued all the same", async () => {
    const streams = gateway(() => true);
    const result = await sendAll(
      {
        markSent: async () => {
          throw new Error("database unavailable");
        },
      },
      streams,
      outgoing(2),
      new Date(0),
      log,
    );
    expect(result.queued).toBe(2);
  });
});
