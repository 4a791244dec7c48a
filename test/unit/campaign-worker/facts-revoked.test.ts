/**
 * The decision's facts say a node is revoked exactly when its registry row does (`node
 * revoke` sets `revoked_at` until the node enrolls again): the engine skips such a node in
 * flight `node_revoked` instead of counting it against the release.
 */
import { describe, expect, it } from "vitest";
import type { NodeRegistryRow } from "../../../control/campaign-store/index.js";
import { buildFacts, type WorkerGateway } from "../../../control/campaign-worker/facts.js";

const nobody: WorkerGateway = {
  send: () => false,
  connected: () => undefined,
  subscribe: () => () => {},
};

function row(id: string, revoked: boolean | undefined): NodeRegistryRow {
  return {
    id,
    boot_id: "b1",
    agent_version: "2.0.0",
    capabilities: ["upgrade.v1"],
    platform: "linux-amd64",
    enabled: true,
    last_seen: null,
    ...(revoked === undefined ? {} : { revoked }),
  };
}

describe("a revoked node's facts", () => {
  it("are revoked when the registry row says so, and not when it says not or says nothing", () => {
    const facts = buildFacts({
      gateway: nobody,
      registry: new Map(
        [row("cut", true), row("kept", false), row("old", undefined)].map((r) => [r.id, r]),
      ),
      stored: new Map(),
      liveness: { now: 10_000, readyAt: 0, offlineAfterMs: 5_000, lastHeardMs: () => undefined },
      self: "control-1",
    });
    expect(facts.get("cut")?.revoked).toBe(true);
    expect(facts.get("kept")?.revoked).toBe(false);
    expect(facts.get("old")?.revoked).toBe(false);
    expect(facts.get("never")?.revoked).toBe(false);
  });
});
