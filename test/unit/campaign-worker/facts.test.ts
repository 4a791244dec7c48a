import { describe, expect, it } from "vitest";
import type { ConnectedNode } from "../../../control/agents/events.js";
import { createCampaign, planCampaign, resolveSpec } from "../../../control/campaign/index.js";
import {
  type ConfigFailureRow,
  campaignFromJson,
  type NodeRegistryRow,
  nodeFromJson,
  type OperationFactRow,
} from "../../../control/campaign-store/index.js";
import {
  buildFacts,
  storedFactsOf,
  type WorkerGateway,
} from "../../../control/campaign-worker/facts.js";

const gateway = (live: Partial<ConnectedNode>[]): WorkerGateway => ({
  send: () => false,
  connected: (id) => live.find((n) => n.nodeId === id) as ConnectedNode | undefined,
  subscribe: () => () => {},
  lastSeenMs: () => 42,
});

/** buildFacts over plain rows, grouped as the worker's working copy groups them. */
function factsFrom(s: {
  nodeIds: string[];
  gateway: WorkerGateway;
  registry: NodeRegistryRow[];
  operations: OperationFactRow[];
  configFailures: ConfigFailureRow[];
}) {
  return buildFacts({
    gateway: s.gateway,
    registry: new Map(s.registry.map((r) => [r.id, r])),
    stored: storedFactsOf(s.operations, s.configFailures),
    liveness: { now: 10_000, readyAt: 0, offlineAfterMs: 5_000, lastHeardMs: () => undefined },
    self: "control-1",
  });
}

describe("decision facts", () => {
  it("takes liveness and the Hello from the hub when connected, from the registry when not", () => {
    const facts = factsFrom({
      nodeIds: ["on", "off", "never"],
      gateway: gateway([
        {
          nodeId: "on",
          bootId: "b2",
          agentVersion: "2.0.0",
          capabilities: ["upgrade.v1"],
          platform: "linux-amd64",
        },
      ]),
      registry: [
        {
          id: "on",
          boot_id: "b1",
          agent_version: "1.0.0",
          capabilities: [],
          platform: "linux-amd64",
          enabled: true,
          last_seen: null,
        },
        {
          id: "off",
          boot_id: "b7",
          agent_version: "1.0.0",
          capabilities: ["upgrade.v1", "config.v1"],
          platform: "linux-amd64",
          enabled: true,
          last_seen: null,
        },
      ],
      operations: [
        {
          id: "c/off/upgrade",
          node_id: "off",
          report_phase: "RESTARTING",
          report_code: null,
          report_message: null,
          report_version: "2.0.0",
          report_boot_id: null,
          report_at: new Date(5),
          report_seq: "12",
          failed_at: null,
          failure: null,
        },
        {
          id: "c/on/upgrade",
          node_id: "on",
          report_phase: null,
          report_code: null,
          report_message: null,
          report_version: null,
          report_boot_id: null,
          report_at: null,
          report_seq: null,
          failed_at: new Date(6),
          failure: "no artifact",
        },
      ],
      configFailures: [{ node_id: "on", at: new Date(7), boot_id: "b2", message: "bad" }],
    });
    expect(facts.get("on")).toMatchObject({
      online: true,
      bootId: "b2",
      agentVersion: "2.0.0",
      lastHeartbeatAt: 42,
      sendFailures: [{ operationId: "c/on/upgrade", at: 6, message: "no artifact" }],
      configFailures: [{ at: 7, bootId: "b2", message: "bad" }],
    });
    expect(facts.get("off")).toMatchObject({
      online: false,
      bootId: "b7",
      capabilities: ["upgrade.v1", "config.v1"],
      // The database's number of the report, from PostgreSQL's bigint text.
      reports: [
        { operationId: "c/off/upgrade", phase: "RESTARTING", version: "2.0.0", at: 5, seq: 12 },
      ],
    });
    expect(facts.get("never")).toMatchObject({
      online: false,
      bootId: undefined,
      capabilities: [],
    });
  });

  it("counts a node whose registry row is online and held by another Control as online, with that row's Hello", () => {
    const row = (id: string, online: boolean, heldBy: string | null) => ({
      id,
      boot_id: `boot-${id}`,
      agent_version: "2.0.0",
      capabilities: ["upgrade.v1"],
      platform: "linux-amd64",
      enabled: true,
      last_seen: new Date(1_000),
      online,
      held_by: heldBy,
    });
    const facts = factsFrom({
      nodeIds: [],
      gateway: gateway([]),
      registry: [
        row("there", true, "control-2"),
        // Held by this Control but its stream is gone here: reconnecting, not online.
        row("mine", true, "control-1"),
        row("ended", false, null),
      ],
      operations: [],
      configFailures: [],
    });
    expect(facts.get("there")).toMatchObject({
      online: true,
      offline: false,
      bootId: "boot-there",
      agentVersion: "2.0.0",
      lastHeartbeatAt: 1_000,
    });
    // now 10 s, offline after 5 s of silence since last_seen (1 s): offline.
    expect(facts.get("mine")).toMatchObject({ online: false, offline: true });
    expect(facts.get("ended")).toMatchObject({ online: false, offline: true });
  });
});

describe("stored records", () => {
  it("round-trip through JSON with every field present", () => {
    const spec = resolveSpec({
      targetVersion: "2.0.0",
      batches: [{ percent: 100, minDurationMs: 0 }],
    });
    const candidates = [
      {
        id: "n1",
        labels: {},
        pool: "",
        enabled: true,
        everConnected: true,
        capabilities: ["upgrade.v1"],
        agentVersion: "1.0.0",
      },
    ];
    const { campaign, nodes } = createCampaign({
      id: "c1",
      spec,
      plan: planCampaign(spec, candidates),
      target: { version: "2.0.0", sequence: 2 },
      now: 1000,
    });
    const back = campaignFromJson(JSON.parse(JSON.stringify(campaign)));
    expect(back).toEqual(campaign);
    expect(Object.keys(back)).toEqual(Object.keys(campaign));
    const node = nodeFromJson(JSON.parse(JSON.stringify(nodes[0])));
    expect(node).toEqual(nodes[0]);
    expect("offeredAt" in node).toBe(true);
  });
});
