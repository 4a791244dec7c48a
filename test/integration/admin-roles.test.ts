import type { DescMethod, DescService } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { METHOD_ROLES } from "../../control/admin/auth.js";
import { AuditService } from "../../proto/gen/agentcontrol/admin/v1/audit_pb.js";
import { CampaignService } from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { CampaignWaitsService } from "../../proto/gen/agentcontrol/admin/v1/campaign_waits_pb.js";
import { FleetService } from "../../proto/gen/agentcontrol/admin/v1/fleet_pb.js";
import { NodeService } from "../../proto/gen/agentcontrol/admin/v1/node_pb.js";
import { ReleaseService } from "../../proto/gen/agentcontrol/admin/v1/release_pb.js";
import {
  DesiredVersionService,
  PlanService,
} from "../../proto/gen/agentcontrol/admin/v1/rollout_pb.js";
import { startTestControl, type TestControl } from "../helpers/control.js";

const SERVICES: DescService[] = [
  NodeService,
  ReleaseService,
  CampaignService,
  CampaignWaitsService,
  AuditService,
  DesiredVersionService,
  PlanService,
  FleetService,
];
const METHODS: Array<[DescService, DescMethod]> = SERVICES.flatMap((s) =>
  s.methods.map((m): [DescService, DescMethod] => [s, m]),
);
type Caller = "none" | "viewer" | "operator";

/** Calls `method` with an empty request and returns the Connect code (undefined = OK). */
async function call(
  baseUrl: string,
  service: DescService,
  method: DescMethod,
  token: string | undefined,
): Promise<Code | undefined> {
  const transport = createConnectTransport({
    baseUrl,
    httpVersion: "1.1",
    interceptors: [
      (next) => (req) => {
        if (token) req.header.set("authorization", `Bearer ${token}`);
        return next(req);
      },
    ],
  });
  const client = createClient(service, transport) as unknown as Record<
    string,
    (req: object, options?: object) => unknown
  >;
  const abort = new AbortController();
  try {
    const result = client[method.localName]?.({}, { signal: abort.signal });
    if (method.methodKind === "server_streaming") {
      for await (const _ of result as AsyncIterable<unknown>) break;
    } else {
      await result;
    }
    return undefined;
  } catch (error) {
    return ConnectError.from(error).code;
  } finally {
    abort.abort();
  }
}

describe("the admin API's role table", () => {
  let tc: TestControl;
  beforeAll(async () => {
    tc = await startTestControl();
  });
  afterAll(async () => {
    await tc?.stop();
  });

  it("names a least role for every RPC of every admin service", () => {
    const missing = METHODS.filter(([s, m]) => !METHOD_ROLES[`${s.typeName}/${m.name}`]).map(
      ([s, m]) => `${s.typeName}/${m.name}`,
    );
    expect(missing).toEqual([]);
  });

  const cases = METHODS.flatMap(([service, method]) =>
    (["none", "viewer", "operator"] as Caller[]).map((caller) => ({ service, method, caller })),
  );
  it.each(cases)("$service.name/$method.name as $caller", async ({ service, method, caller }) => {
    const token =
      caller === "none" ? undefined : caller === "viewer" ? tc.viewerToken : tc.operatorToken;
    const code = await call(tc.adminUrl, service, method, token);
    const required = METHOD_ROLES[`${service.typeName}/${method.name}`];
    if (caller === "none") {
      expect(code).toBe(Code.Unauthenticated);
    } else if (caller === "viewer" && required === "operator") {
      expect(code).toBe(Code.PermissionDenied);
    } else {
      expect([Code.Unauthenticated, Code.PermissionDenied, Code.Unimplemented]).not.toContain(code);
    }
  });
});
