import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { specInputFromProto, specToProto } from "../../../control/admin/campaign-spec-convert.js";
import { redactedGateText } from "../../../control/campaign/gates.js";
import { DEFAULT_POLICY, resolveSpec } from "../../../control/campaign/spec.js";
import { CampaignSpecSchema } from "../../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";

describe("webhook URLs are secrets: the API shows their origin only", () => {
  it.each([
    ["https://hooks.example.com/services/T000/B000/XXXX", "webhook https://hooks.example.com/…"],
    [
      "https://user:pw@hooks.example.com:8443/x?token=abc",
      "webhook https://hooks.example.com:8443/…",
    ],
    ["http://10.0.0.7/", "webhook http://10.0.0.7/…"],
  ])("shows %s as %s", (url, shown) => {
    expect(redactedGateText({ kind: "webhook", url })).toBe(shown);
  });

  it("shows a Prometheus gate in full (its URL and query are not secrets)", () => {
    const gate = { kind: "prometheus" as const, url: "http://prom:9090", query: "up" };
    expect(redactedGateText(gate)).toBe("prometheus http://prom:9090 up");
  });

  it("never puts a webhook's path or query in a campaign spec message", () => {
    const input = specInputFromProto(
      create(CampaignSpecSchema, {
        targetVersion: "2.0.0",
        gates: ["webhook https://hooks.example.com/secret-path?k=v"],
      }),
      DEFAULT_POLICY,
    );
    const message = specToProto(resolveSpec(input, DEFAULT_POLICY));
    expect(message.gates).toEqual(["webhook https://hooks.example.com/…"]);
    expect(JSON.stringify(message.gates)).not.toMatch(/secret-path|k=v/);
  });
});
