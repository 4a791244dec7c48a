import { create, type DescEnum, type DescMessage } from "@bufbuild/protobuf";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { specFields } from "../../../cli/commands/campaign-fields.js";
import { formatCampaignNodes, formatCampaignTable } from "../../../cli/commands/campaign-format.js";
import { tableJson } from "../../../cli/table-json.js";
import { file_agentcontrol_admin_v1_audit } from "../../../proto/gen/agentcontrol/admin/v1/audit_pb.js";
import {
  BatchState,
  CampaignNodeSchema,
  CampaignPhase,
  CampaignSchema,
  file_agentcontrol_admin_v1_campaign,
  GetCampaignResponseSchema,
  NodeState,
  OnBreach,
} from "../../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import {
  file_agentcontrol_admin_v1_campaign_waits,
  GetCampaignWaitsResponseSchema,
} from "../../../proto/gen/agentcontrol/admin/v1/campaign_waits_pb.js";
import { file_agentcontrol_admin_v1_fleet } from "../../../proto/gen/agentcontrol/admin/v1/fleet_pb.js";
import { file_agentcontrol_admin_v1_node } from "../../../proto/gen/agentcontrol/admin/v1/node_pb.js";
import { file_agentcontrol_admin_v1_release } from "../../../proto/gen/agentcontrol/admin/v1/release_pb.js";
import { file_agentcontrol_admin_v1_rollout } from "../../../proto/gen/agentcontrol/admin/v1/rollout_pb.js";
import { file_agentcontrol_admin_v1_version } from "../../../proto/gen/agentcontrol/admin/v1/version_pb.js";

const campaign = create(CampaignSchema, {
  id: "c1",
  phase: CampaignPhase.RUNNING,
  currentBatch: 1,
  nodeCount: 3,
  spec: {
    targetVersion: "1.2.0",
    onBreach: OnBreach.PAUSE,
    failureThresholdPercent: 0,
    batches: [
      { percent: 50, minDuration: durationFromMs(30 * 60_000) },
      { percent: 100, minDuration: durationFromMs(90 * 60_000) },
    ],
    selector: { labels: { env: "prod" }, pools: ["web"] },
    reconnectTimeout: durationFromMs(600_000),
    maxFailures: { case: "maxFailuresPercent", value: 2 },
  },
  counts: [{ state: NodeState.TIMED_OUT, count: 1 }],
  batches: [
    { index: 0, percent: 50, state: BatchState.PASSED, nodeCount: 1 },
    { index: 1, percent: 100, state: BatchState.RUNNING, nodeCount: 2 },
  ],
});
const nodes = [
  { nodeId: "n1", batch: 0, state: NodeState.SUCCEEDED },
  { nodeId: "n2", batch: 1, state: NodeState.TIMED_OUT },
];

describe("JSON in the tables' words", () => {
  const json = tableJson(
    GetCampaignResponseSchema,
    create(GetCampaignResponseSchema, { campaign, nodes }),
  ) as {
    campaign: {
      phase: string;
      currentBatch: number;
      counts: unknown[];
      batches: { state: string; index: number }[];
      spec: unknown;
    };
    nodes: { state: string; batch: number }[];
  };

  it("names phases, node and batch states as the tables do", () => {
    expect(json.campaign.phase).toBe("running");
    expect(json.campaign.counts).toEqual([{ state: "timed_out", count: 1 }]);
    expect(json.campaign.batches.map((b) => b.state)).toEqual(["passed", "running"]);
    expect(json.nodes.map((n) => n.state)).toEqual(["succeeded", "timed_out"]);
  });

  it("counts batches from 1, as the list table's BATCH 2/2 and the node rows do", () => {
    expect(formatCampaignTable([campaign])).toMatch(/running +1\.2\.0 +2\/2 /);
    expect(json.campaign.currentBatch).toBe(2);
    expect(json.campaign.batches.map((b) => b.index)).toEqual([1, 2]);
    expect(
      formatCampaignNodes(
        campaign,
        nodes.map((n) => create(CampaignNodeSchema, n)),
        false,
      ),
    ).toMatch(/^n2 +2 +timed_out/m);
    expect(json.nodes.map((n) => n.batch)).toEqual([1, 2]);
  });

  it("writes the spec in the flags' words", () => {
    expect(json.campaign.spec).toEqual({
      version: "1.2.0",
      batches: "50:30m,100:1h30m",
      threshold: 0,
      "on-breach": "pause",
      selector: { env: "prod" },
      pool: ["web"],
      "reconnect-timeout": "10m",
      "max-failures": "2%",
    });
    expect(specFields(campaign.spec!)).toEqual(json.campaign.spec);
  });

  it("leaves no enum's protobuf name anywhere", () => {
    const text = JSON.stringify(json);
    expect(text).not.toMatch(/[A-Z]+_[A-Z_]+/);
  });

  it("counts the waits' current batch from 1 too", () => {
    const waits = tableJson(
      GetCampaignWaitsResponseSchema,
      create(GetCampaignWaitsResponseSchema, {
        campaignId: "c1",
        phase: CampaignPhase.PAUSED,
        currentBatch: 0,
        batchCount: 3,
      }),
    ) as Record<string, unknown>;
    expect(waits).toMatchObject({ phase: "paused", currentBatch: 1, batchCount: 3 });
  });
});

/** Init for `desc` with every enum at its last value, nested messages filled (depth ≤ 3). */
function everyEnumSet(desc: DescMessage, depth = 0): Record<string, unknown> {
  const init: Record<string, unknown> = {};
  const last = (e: DescEnum) => e.values.at(-1)?.number ?? 0;
  const nested = (m: DescMessage) =>
    m.typeName.startsWith("google.protobuf.") || depth >= 3
      ? undefined
      : everyEnumSet(m, depth + 1);
  for (const f of desc.fields) {
    let value: unknown;
    if (f.fieldKind === "enum") value = last(f.enum);
    else if (f.fieldKind === "message") value = nested(f.message);
    else if (f.fieldKind === "list" && f.listKind === "enum") value = [last(f.enum)];
    else if (f.fieldKind === "list" && f.listKind === "message") value = [nested(f.message)];
    else if (f.fieldKind === "map" && f.mapKind === "enum") value = { k: last(f.enum) };
    else if (f.fieldKind === "map" && f.mapKind === "message") value = { k: nested(f.message) };
    if (value === undefined || (Array.isArray(value) && value[0] === undefined)) continue;
    if (f.oneof !== undefined) init[f.oneof.localName] = { case: f.localName, value };
    else init[f.localName] = value;
  }
  return init;
}

describe("every message of the admin API", () => {
  const files = [
    file_agentcontrol_admin_v1_audit,
    file_agentcontrol_admin_v1_campaign,
    file_agentcontrol_admin_v1_campaign_waits,
    file_agentcontrol_admin_v1_fleet,
    file_agentcontrol_admin_v1_node,
    file_agentcontrol_admin_v1_release,
    file_agentcontrol_admin_v1_rollout,
    file_agentcontrol_admin_v1_version,
  ];
  const messages = files.flatMap((f) => f.messages);

  it.each(messages.map((m) => [m.typeName, m] as const))(
    "%s prints no enum by its protobuf name",
    (_name, desc) => {
      const text = JSON.stringify(tableJson(desc, create(desc, everyEnumSet(desc) as never)));
      expect(text).not.toMatch(/"[A-Z][A-Z0-9]*(_[A-Z0-9]+)+"/);
    },
  );
});
