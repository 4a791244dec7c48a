/**
 * The fixed times and the campaign and outbox builders the campaign store contract tests
 * share. Times are fixed: every test starts at T0 (the memory store runs on a manual clock set
 * to it).
 */
import {
  type CampaignNode,
  createCampaign,
  type NodeState,
  operationId,
  planCampaign,
  resolveSpec,
} from "../../../control/campaign/index.js";
import type { NewOperation } from "../../../control/campaign-store/index.js";

/** The instant every test starts at. */
export const T0 = Date.UTC(2031, 0, 1);

/** The instant `ms` milliseconds after T0. */
export const at = (ms: number) => new Date(T0 + ms);

/** The version every campaign of the tests upgrades to. */
export const TARGET = "2.0.0";

/** A campaign node as a test wants it. */
export interface NodeSpec {
  readonly id: string;
  readonly pool?: string;
  readonly state?: NodeState;
  readonly graceEndsAt?: number;
}

const SPEC = resolveSpec({
  targetVersion: TARGET,
  batches: [{ percent: 100, minDurationMs: 0 }],
  reconnectTimeoutMs: 3_600_000,
});

/** A running campaign of `nodes` (one batch, canary order by node id hash). */
export function campaignOf(id: string, nodes: readonly NodeSpec[], createdAt = T0) {
  const plan = planCampaign(
    SPEC,
    nodes.map((n) => ({
      id: n.id,
      labels: {},
      pool: n.pool ?? "p",
      enabled: true,
      everConnected: true,
      capabilities: ["upgrade.v1"],
      agentVersion: "1.0.0",
    })),
  );
  const created = createCampaign({
    id,
    spec: SPEC,
    plan,
    target: { version: TARGET, sequence: 2 },
    now: createdAt,
  });
  const wanted = new Map(nodes.map((n) => [n.id, n]));
  const records: CampaignNode[] = created.nodes.map((node) => {
    const want = wanted.get(node.nodeId) as NodeSpec;
    return { ...node, state: want.state ?? "waiting", graceEndsAt: want.graceEndsAt };
  });
  return { campaign: created.campaign, nodes: records };
}

const payloadOf = (id: string) => new TextEncoder().encode(`payload of ${id}`);

/** The text of an outbox payload (`op` writes `payload of <operation id>`). */
export const textOf = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

/** An outbox row for `writeDecision`: a deliverable payload unless said otherwise. */
export function op(
  campaignId: string,
  nodeId: string,
  kind: string,
  extra: Partial<Pick<NewOperation, "payload" | "failure" | "id">> = {},
): NewOperation {
  const id = extra.id ?? operationId(campaignId, nodeId, kind as "upgrade");
  return {
    id,
    campaignId,
    nodeId,
    kind,
    payload: extra.payload === undefined ? payloadOf(id) : extra.payload,
    failure: extra.failure,
  };
}
