/**
 * Failed admin authentications leave a trace: each is counted in
 * `agent_control_admin_requests_refused_total{reason="unauthenticated"}` and, by reason, in
 * `agent_control_admin_auth_failures_total{reason}`, and they are audited
 * as `admin.auth_failed`, at most one event per client address per minute.
 */
import { createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AuditService } from "../../proto/gen/agentcontrol/admin/v1/audit_pb.js";
import { NodeService } from "../../proto/gen/agentcontrol/admin/v1/node_pb.js";
import { startTestControl, type TestControl } from "../helpers/control.js";
import { eventually } from "../helpers/raw-agent.js";

describe("failed admin authentications", { timeout: 60_000 }, () => {
  let tc: TestControl;
  beforeAll(async () => {
    tc = await startTestControl();
  });
  afterAll(async () => {
    await tc?.stop();
  });

  it("are counted each, and audited once per address per minute", async () => {
    const bearer: Interceptor = (next) => (req) => {
      req.header.set("authorization", "Bearer guessed-token-0123456789abcdef");
      return next(req);
    };
    const guesser = createClient(
      NodeService,
      createConnectTransport({ baseUrl: tc.adminUrl, httpVersion: "1.1", interceptors: [bearer] }),
    );
    for (let i = 0; i < 5; i++) {
      await expect(guesser.listNodes({})).rejects.toThrow(/unknown admin token/);
    }
    const anonymous = createClient(
      NodeService,
      createConnectTransport({ baseUrl: tc.adminUrl, httpVersion: "1.1" }),
    );
    await expect(anonymous.listNodes({})).rejects.toThrow(/missing bearer token/);
    const metrics = await (await fetch(`${tc.adminUrl}/metrics`)).text();
    expect(metrics).toMatch(
      /agent_control_admin_requests_refused_total\{reason="unauthenticated"\} 6\b/,
    );
    expect(metrics).toMatch(/^# TYPE agent_control_admin_auth_failures_total counter$/m);
    expect(metrics).toMatch(
      /^agent_control_admin_auth_failures_total\{reason="unknown_token"\} 5$/m,
    );
    expect(metrics).toMatch(
      /^agent_control_admin_auth_failures_total\{reason="missing_token"\} 1$/m,
    );
    expect(metrics).toMatch(
      /^agent_control_admin_auth_failures_total\{reason="expired_token"\} 0$/m,
    );
    await eventually(async () => {
      const { events } = await tc
        .client(AuditService)
        .listAuditEvents({ action: "admin.auth_failed" });
      return events.length > 0;
    }, 10_000);
    const { events } = await tc
      .client(AuditService)
      .listAuditEvents({ action: "admin.auth_failed" });
    expect(events).toHaveLength(1);
    expect(events[0]?.actorIp).toMatch(/127\.0\.0\.1/);
    expect(events[0]?.message).toMatch(/ListNodes: unknown admin token/);
  });
});
