import { createClient } from "@connectrpc/connect";
import { createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NodeService } from "../../proto/gen/agentcontrol/admin/v1/node_pb.js";
import { startTestControl, type TestControl } from "../helpers/control.js";

describe("admin API protocols on one port", () => {
  let tc: TestControl;
  beforeAll(async () => {
    tc = await startTestControl();
  });
  afterAll(async () => {
    await tc?.stop();
  });

  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

  it("answers plain JSON over HTTP/1.1, as curl would send it", async () => {
    const response = await fetch(
      `${tc.adminUrl}/agentcontrol.admin.v1.NodeService/CreateJoinToken`,
      {
        method: "POST",
        headers: { "content-type": "application/json", ...bearer(tc.operatorToken) },
        body: JSON.stringify({ description: "from curl", ttl: "3600s" }),
      },
    );
    expect(response.status).toBe(200);
    const body = (await response.json()) as { secret: string; token: { description: string } };
    expect(body.secret).toMatch(/^ajt\./);
    expect(body.token.description).toBe("from curl");
  });

  it("answers gRPC over cleartext HTTP/2", async () => {
    const client = createClient(
      NodeService,
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
    const response = await client.listNodes({});
    expect(response.totalSize).toBe(0);
  });

  it("answers gRPC-Web over HTTP/1.1", async () => {
    const client = createClient(
      NodeService,
      createGrpcWebTransport({
        baseUrl: tc.adminUrl,
        httpVersion: "1.1",
        interceptors: [
          (next) => (req) => {
            req.header.set("authorization", `Bearer ${tc.viewerToken}`);
            return next(req);
          },
        ],
      }),
    );
    const response = await client.listJoinTokens({}).catch((e: Error) => e);
    expect(String(response)).toMatch(/role viewer may not call ListJoinTokens/);
  });

  it("serves health, readiness and Prometheus metrics without a token", async () => {
    expect((await fetch(`${tc.adminUrl}/healthz`)).status).toBe(200);
    expect(await (await fetch(`${tc.adminUrl}/readyz`)).text()).toBe("ready\n");
    const metrics = await (await fetch(`${tc.adminUrl}/metrics`)).text();
    expect(metrics).toMatch(/^# TYPE agent_control_streams gauge$/m);
  });

  it("refuses a call without a token with a message that says what to send", async () => {
    const response = await fetch(`${tc.adminUrl}/agentcontrol.admin.v1.NodeService/ListNodes`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(response.status).toBe(401);
    expect(((await response.json()) as { message: string }).message).toMatch(
      /missing bearer token/,
    );
  });
});
