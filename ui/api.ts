/**
 * The admin API as the dashboard calls it: the same Connect services `agentctl` uses, on the
 * origin that served the page, every call carrying the operator's bearer token.
 */
import {
  type Client,
  Code,
  ConnectError,
  createClient,
  type Interceptor,
} from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { AuditService } from "../proto/gen/agentcontrol/admin/v1/audit_pb.js";
import { CampaignService } from "../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { CampaignWaitsService } from "../proto/gen/agentcontrol/admin/v1/campaign_waits_pb.js";
import { FleetService } from "../proto/gen/agentcontrol/admin/v1/fleet_pb.js";
import { NodeService } from "../proto/gen/agentcontrol/admin/v1/node_pb.js";
import { ReleaseService } from "../proto/gen/agentcontrol/admin/v1/release_pb.js";
import {
  DesiredVersionService,
  PlanService,
} from "../proto/gen/agentcontrol/admin/v1/rollout_pb.js";

/** Clients of the admin services, bound to one token. */
export interface Api {
  readonly campaigns: Client<typeof CampaignService>;
  readonly campaignWaits: Client<typeof CampaignWaitsService>;
  readonly nodes: Client<typeof NodeService>;
  readonly audit: Client<typeof AuditService>;
  readonly fleet: Client<typeof FleetService>;
  readonly desired: Client<typeof DesiredVersionService>;
  readonly plans: Client<typeof PlanService>;
  readonly releases: Client<typeof ReleaseService>;
}

/** Clients that send `token` on every call to the admin API at `baseUrl`. */
export function createApi(token: string, baseUrl: string = window.location.origin): Api {
  const bearer: Interceptor = (next) => (req) => {
    req.header.set("authorization", `Bearer ${token}`);
    return next(req);
  };
  const transport = createConnectTransport({
    baseUrl,
    useBinaryFormat: true,
    interceptors: [bearer],
  });
  return {
    campaigns: createClient(CampaignService, transport),
    campaignWaits: createClient(CampaignWaitsService, transport),
    nodes: createClient(NodeService, transport),
    audit: createClient(AuditService, transport),
    fleet: createClient(FleetService, transport),
    desired: createClient(DesiredVersionService, transport),
    plans: createClient(PlanService, transport),
    releases: createClient(ReleaseService, transport),
  };
}

/** True when Control refused the token itself (unknown or expired), not one call. */
export function isUnauthenticated(error: unknown): boolean {
  return error instanceof ConnectError && error.code === Code.Unauthenticated;
}

/** A one-line description of a failed call, as Control worded it. */
export function describeError(error: unknown): string {
  if (error instanceof ConnectError) return `${Code[error.code]}: ${error.rawMessage}`;
  return error instanceof Error ? error.message : String(error);
}
