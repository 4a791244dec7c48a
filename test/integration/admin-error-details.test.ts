import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CampaignService } from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { NodeService } from "../../proto/gen/agentcontrol/admin/v1/node_pb.js";
import { ErrorInfoSchema } from "../../proto/gen/google/rpc/error_details_pb.js";
import { startTestControl, type TestControl } from "../helpers/control.js";

describe("admin API errors carry a google.rpc.ErrorInfo", () => {
  let tc: TestControl;
  beforeAll(async () => {
    tc = await startTestControl();
  });
  afterAll(async () => {
    await tc?.stop();
  });

  const refused = async (call: Promise<unknown>): Promise<ConnectError> =>
    ConnectError.from(
      await call.then(
        () => new Error("answered"),
        (e: unknown) => e,
      ),
    );

  it("names the field of an invalid argument, over gRPC (HTTP/2)", async () => {
    const grpc = createClient(
      CampaignService,
      createGrpcTransport({
        baseUrl: tc.adminUrl,
        interceptors: [
          (next) => (req) => {
            req.header.set("authorization", `Bearer ${tc.viewerToken}`);
            return next(req);
          },
        ],
      }),
    );
    const error = await refused(grpc.listCampaigns({ pageSize: -1 }));
    expect(error.code).toBe(Code.InvalidArgument);
    const [info] = error.findDetails(ErrorInfoSchema);
    expect(info).toMatchObject({
      reason: "INVALID_ARGUMENT",
      domain: "agentcontrol",
      metadata: { field: "page_size" },
    });
  });

  it("names the spec fields of an invalid campaign and the needed role of a refused call", async () => {
    const operator = tc.client(CampaignService);
    const invalid = await refused(
      operator.planCampaign({
        spec: { targetVersion: "2.0.0", batches: [{ percent: 50 }, { percent: 40 }] },
      }),
    );
    expect(invalid.code).toBe(Code.InvalidArgument);
    expect(invalid.findDetails(ErrorInfoSchema)[0]?.reason).toBe("INVALID_PLAN");
    expect(invalid.findDetails(ErrorInfoSchema)[0]?.metadata.field).toMatch(
      /^spec\.batches\[\d\]\.percent/,
    );
    const viewer = tc.client(NodeService, tc.viewerToken);
    const denied = await refused(viewer.disableNode({ nodeId: "n1" }));
    expect(denied.code).toBe(Code.PermissionDenied);
    expect(denied.findDetails(ErrorInfoSchema)[0]).toMatchObject({
      reason: "PERMISSION_DENIED",
      metadata: { method: "DisableNode", role: "viewer", requiredRole: "operator" },
    });
  });

  it("sends the detail in a plain JSON error body, as curl sees it", async () => {
    const response = await fetch(`${tc.adminUrl}/agentcontrol.admin.v1.NodeService/GetNode`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: `Bearer ${tc.viewerToken}`,
      },
      body: JSON.stringify({ nodeId: "ghost" }),
    });
    expect(response.status).toBe(404);
    const body = (await response.json()) as {
      code: string;
      details: { type: string; value: string }[];
    };
    expect(body.code).toBe("not_found");
    expect(body.details.map((d) => d.type)).toEqual(["google.rpc.ErrorInfo"]);
  });
});
