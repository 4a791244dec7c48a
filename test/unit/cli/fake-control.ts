/**
 * A stand-in admin API for agentctl's unit tests: real Connect over HTTP/1.1 on a loopback
 * port, with scripted answers, so the client, output and error paths are exercised without
 * PostgreSQL. Tokens: `operator-token` may do everything, `viewer-token` only read.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type ConnectRouter, type HandlerContext } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import {
  type Campaign,
  type CampaignNode,
  CampaignPhase,
  CampaignSchema,
  CampaignService,
} from "../../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import {
  type CampaignWait,
  CampaignWaitsService,
} from "../../../proto/gen/agentcontrol/admin/v1/campaign_waits_pb.js";
import { type Node, NodeService } from "../../../proto/gen/agentcontrol/admin/v1/node_pb.js";
import { VersionService } from "../../../proto/gen/agentcontrol/admin/v1/version_pb.js";

/** What the fake serves; tests change these between calls. */
export interface FakeState {
  nodes: Node[];
  /** Updates WatchCampaign streams, in order, before the stream ends. */
  watchUpdates: Campaign[];
  /** Milliseconds between streamed updates. */
  watchDelayMs: number;
  /** Keep the watch stream open after the updates (until the client cancels). */
  watchHang: boolean;
  /** Campaigns StartCampaign created, newest last. */
  campaigns: Campaign[];
  /** The node rows ListCampaignNodes pages through (whatever the campaign). */
  campaignNodes: CampaignNode[];
  /** What GetCampaignWaits answers for any campaign. */
  waits: CampaignWait[];
  /** Every request's method and authorization header, in order. */
  calls: { method: string; authorization: string | null }[];
}

/** A running fake admin API. */
export interface FakeControl {
  readonly url: string;
  readonly state: FakeState;
  stop(): Promise<void>;
}

function role(ctx: HandlerContext): "operator" | "viewer" {
  const auth = ctx.requestHeader.get("authorization");
  if (auth === "Bearer operator-token") return "operator";
  if (auth === "Bearer viewer-token") return "viewer";
  throw new ConnectError("missing or invalid bearer token", Code.Unauthenticated);
}

function requireOperator(ctx: HandlerContext): void {
  if (role(ctx) !== "operator") {
    throw new ConnectError("the viewer role may only read", Code.PermissionDenied);
  }
}

/** Starts the fake on 127.0.0.1, port 0. */
export async function startFakeControl(initial: Partial<FakeState> = {}): Promise<FakeControl> {
  const state: FakeState = {
    nodes: [],
    watchUpdates: [],
    watchDelayMs: 5,
    watchHang: false,
    campaigns: [],
    campaignNodes: [],
    waits: [],
    calls: [],
    ...initial,
  };
  const routes = (router: ConnectRouter): void => {
    router.service(NodeService, {
      listNodes(req, ctx) {
        role(ctx);
        const matching = state.nodes.filter(
          (n) =>
            (req.online === undefined || n.online === req.online) &&
            Object.entries(req.labels).every(([k, v]) => n.labels[k] === v),
        );
        const size = req.pageSize > 0 ? req.pageSize : 100;
        const start = req.pageToken === "" ? 0 : Number(req.pageToken);
        const end = start + size;
        return {
          nodes: matching.slice(start, end),
          nextPageToken: end < matching.length ? String(end) : "",
          totalSize: matching.length,
        };
      },
      getNode(req, ctx) {
        role(ctx);
        const node = state.nodes.find((n) => n.nodeId === req.nodeId);
        if (node === undefined)
          throw new ConnectError(`node ${req.nodeId} not found`, Code.NotFound);
        return { node };
      },
      disableNode(req, ctx) {
        requireOperator(ctx);
        const node = state.nodes.find((n) => n.nodeId === req.nodeId);
        if (node === undefined)
          throw new ConnectError(`node ${req.nodeId} not found`, Code.NotFound);
        node.enabled = false;
        return { node };
      },
    });
    router.service(CampaignWaitsService, {
      getCampaignWaits(req, ctx) {
        role(ctx);
        return { campaignId: req.id, waits: state.waits };
      },
    });
    router.service(VersionService, {
      getVersion(_req, ctx) {
        role(ctx);
        return {
          version: "9.8.7",
          nodeVersion: "20.19.0",
          platform: "linux-x64",
          instanceId: "fake-1",
        };
      },
    });
    router.service(CampaignService, {
      planCampaign(req, ctx) {
        role(ctx);
        const ids = state.nodes.map((n) => n.nodeId);
        return {
          totalNodes: ids.length,
          batches: [
            { index: 0, percent: 50, nodeIds: ids.slice(0, Math.ceil(ids.length / 2)) },
            { index: 1, percent: 100, nodeIds: ids.slice(Math.ceil(ids.length / 2)) },
          ],
          unsupportedNodeIds: [],
          upToDateNodeIds: [],
          ...(req.spec?.targetVersion === "0.0.0" ? { totalNodes: 0 } : {}),
          ...(req.spec?.targetVersion === "1.3.0"
            ? {
                skipped: [
                  {
                    code: "platform_unsupported",
                    message: "release 1.3.0 has no artifact for linux-arm64",
                    nodeIds: ["n2", "n4"],
                  },
                ],
              }
            : {}),
        };
      },
      startCampaign(req, ctx) {
        requireOperator(ctx);
        const campaign = create(CampaignSchema, {
          id: `c${state.campaigns.length + 1}`,
          phase: CampaignPhase.RUNNING,
          nodeCount: state.nodes.length,
          batches: [
            { index: 0, percent: 50 },
            { index: 1, percent: 100 },
          ],
          createdBy: "token:admin",
          ...(req.spec === undefined ? {} : { spec: req.spec }),
        });
        state.campaigns.push(campaign);
        return { campaign };
      },
      listCampaigns(_req, ctx) {
        role(ctx);
        return { campaigns: [...state.campaigns].reverse() };
      },
      getCampaign(req, ctx) {
        role(ctx);
        const campaign = state.campaigns.find((c) => c.id === req.id);
        if (campaign === undefined)
          throw new ConnectError(`campaign ${req.id} not found`, Code.NotFound);
        return { campaign, nodes: [] };
      },
      listCampaignNodes(req, ctx) {
        role(ctx);
        const matching = state.campaignNodes.filter(
          (n) => req.states.length === 0 || req.states.includes(n.state),
        );
        const start = req.pageToken === "" ? 0 : Number(req.pageToken);
        const end = start + (req.pageSize > 0 ? req.pageSize : 100);
        return {
          nodes: matching.slice(start, end),
          nextPageToken: end < matching.length ? String(end) : "",
        };
      },
      pauseCampaign(req, ctx) {
        requireOperator(ctx);
        const campaign = state.campaigns.find((c) => c.id === req.id);
        if (campaign === undefined)
          throw new ConnectError(`campaign ${req.id} not found`, Code.NotFound);
        campaign.phase = CampaignPhase.PAUSED;
        return { campaign };
      },
      abortCampaign(req, ctx) {
        requireOperator(ctx);
        const campaign = state.campaigns.find((c) => c.id === req.id);
        if (campaign === undefined)
          throw new ConnectError(`campaign ${req.id} not found`, Code.NotFound);
        campaign.phase = CampaignPhase.ABORTED;
        return { campaign };
      },
      async *watchCampaign(req, ctx) {
        role(ctx);
        for (const campaign of state.watchUpdates) {
          await new Promise((r) => setTimeout(r, state.watchDelayMs));
          yield { campaign: { ...campaign, id: req.id } };
        }
        if (state.watchHang) {
          await new Promise<void>((resolve) =>
            ctx.signal.addEventListener("abort", () => resolve()),
          );
        }
      },
    });
  };
  const handler = connectNodeAdapter({
    routes,
    interceptors: [
      (next) => async (req) => {
        state.calls.push({
          method: req.method.name,
          authorization: req.header.get("authorization"),
        });
        return await next(req);
      },
    ],
  });
  const server: Server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    state,
    stop: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
