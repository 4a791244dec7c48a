/**
 * Test helpers for the pure campaign engine: fleets of candidates, a started campaign, and a
 * harness that holds facts, steps time and runs `decide` the way the worker does (decide, then
 * persist its changes), recording every action.
 */
import { createCampaign } from "../../../control/campaign/create.js";
import { applyDecision, type DecideInput, decide } from "../../../control/campaign/decide.js";
import type {
  Action,
  ActionKind,
  AdminCommand,
  CampaignNode,
  CampaignSpecInput,
  CampaignState,
  Candidate,
  Decision,
  GateResult,
  NodeFacts,
  NodeState,
  ObservedPhase,
  Target,
} from "../../../control/campaign/index.js";
import { operationId, planCampaign, resolveSpec } from "../../../control/campaign/index.js";

export const MIN = 60_000;

export { referenceOrderKey } from "../../helpers/canary-order.js";
export const OLD = "1.0.0";
export const NEW = "2.0.0";

/** Options for a fleet of candidates named node-000, node-001, … */
export interface FleetOptions {
  readonly pool?: (i: number) => string;
  readonly labels?: (i: number) => Record<string, string>;
  readonly capabilities?: (i: number) => string[];
  readonly version?: (i: number) => string;
}

/** `count` enabled, ever-connected candidates on OLD with upgrade.v1. */
export function fleet(count: number, o: FleetOptions = {}): Candidate[] {
  return Array.from({ length: count }, (_, i) => ({
    id: `node-${String(i).padStart(3, "0")}`,
    labels: o.labels?.(i) ?? {},
    pool: o.pool?.(i) ?? "",
    enabled: true,
    everConnected: true,
    capabilities: o.capabilities?.(i) ?? ["upgrade.v1"],
    agentVersion: o.version?.(i) ?? OLD,
  }));
}

/** A running campaign and its harness. */
export interface Harness {
  campaign: CampaignState;
  nodes: CampaignNode[];
  readonly facts: Map<string, NodeFacts>;
  now: number;
  readonly target: Target;
  readonly actions: Action[];
  last: Decision | undefined;
  boots: number;
}

/** Starts a campaign at t=0 over the fleet (every node online), WITHOUT deciding yet. */
export function start(
  candidates: readonly Candidate[],
  spec: Partial<CampaignSpecInput> = {},
): Harness {
  const resolved = resolveSpec({ targetVersion: NEW, ...spec });
  const plan = planCampaign(resolved, candidates);
  const target = { version: NEW, sequence: 2 };
  const { campaign, nodes } = createCampaign({ id: "c1", spec: resolved, plan, target, now: 0 });
  const facts = new Map<string, NodeFacts>();
  candidates.forEach((c, i) => {
    facts.set(c.id, {
      nodeId: c.id,
      online: true,
      offline: false,
      disabled: false,
      bootId: `boot-${i}-0`,
      agentVersion: c.agentVersion,
      capabilities: c.capabilities,
      lastHeartbeatAt: 0,
      reports: [],
      configFailures: [],
      sendFailures: [],
    });
  });
  return { campaign, nodes, facts, now: 0, target, actions: [], last: undefined, boots: 0 };
}

/** Runs one decision at the harness's time and persists it (`extra`: more decide input). */
export function tick(
  h: Harness,
  commands: readonly AdminCommand[] = [],
  extra: Pick<
    DecideInput,
    "changedFacts" | "gates" | "positions" | "pools" | "readyAt" | "yanked" | "yankedPrevious"
  > = {},
): Decision {
  const decision = decide({
    campaign: h.campaign,
    nodes: h.nodes,
    facts: h.facts,
    now: h.now,
    target: h.target,
    commands,
    ...extra,
  });
  const next = applyDecision(h.campaign, h.nodes, decision);
  h.campaign = next.campaign;
  h.nodes = next.nodes;
  for (const a of decision.actions) h.actions.push(a);
  h.last = decision;
  return decision;
}

/** Decides as {@link tick} does, with these gate results. */
export function decideWith(
  h: Harness,
  gates: readonly GateResult[] = [],
  commands: readonly AdminCommand[] = [],
  extra: Pick<DecideInput, "readyAt"> = {},
): Decision {
  return tick(h, commands, { ...extra, gates });
}

/** Moves time forward by `ms`, then decides. */
export function advance(h: Harness, ms: number): Decision {
  h.now += ms;
  return tick(h);
}

function patchFacts(h: Harness, nodeId: string, patch: Partial<NodeFacts>): void {
  const f = h.facts.get(nodeId);
  if (f === undefined) throw new Error(`no facts for ${nodeId}`);
  h.facts.set(nodeId, { ...f, ...patch });
}

/** The database's order of reports (`ObservedReport.seq`): every report() write takes the next. */
let reportSeq = 0;

/** The agent reports `phase` on its operation of `kind` (with `said`'s code and message when given). */
export function report(
  h: Harness,
  nodeId: string,
  phase: ObservedPhase,
  kind: ActionKind = "upgrade",
  said: { readonly code?: string; readonly message?: string } = {},
): void {
  const f = h.facts.get(nodeId);
  const id = operationId(h.campaign.id, nodeId, kind);
  const reports = (f?.reports ?? []).filter((r) => r.operationId !== id);
  patchFacts(h, nodeId, {
    reports: [
      ...reports,
      {
        operationId: id,
        phase,
        version: "",
        code: said.code ?? "",
        message: said.message ?? phase.toLowerCase(),
        at: h.now,
        bootId: f?.bootId,
        seq: ++reportSeq,
      },
    ],
  });
}

/** The node restarts and says Hello on `version` with a fresh boot id. */
export function reboot(h: Harness, nodeId: string, version: string): void {
  h.boots++;
  patchFacts(h, nodeId, {
    online: true,
    offline: false,
    bootId: `boot-${nodeId}-${h.boots}`,
    agentVersion: version,
    lastHeartbeatAt: h.now,
  });
}

/** The node's stream closes / heartbeats stop, and it stays away past offlineAfter (offline). */
export function goOffline(h: Harness, nodeId: string): void {
  patchFacts(h, nodeId, { online: false, offline: true });
}

/** The node has no stream on this Control but is not offline yet (e.g. just after a restart). */
export function goReconnecting(h: Harness, nodeId: string): void {
  patchFacts(h, nodeId, { online: false, offline: false });
}

/** The node's stream is open again on the same boot. */
export function goOnline(h: Harness, nodeId: string): void {
  patchFacts(h, nodeId, { online: true, offline: false });
}

/** An administrator disables (or enables again) the node in the registry. */
export function setDisabled(h: Harness, nodeId: string, disabled = true): void {
  patchFacts(h, nodeId, { disabled });
}

/** Replaces the node's negotiated capabilities. */
export function setCapabilities(h: Harness, nodeId: string, capabilities: string[]): void {
  patchFacts(h, nodeId, { capabilities });
}

/** The node reports a failed ConfigStatus on its current boot. */
export function configFails(h: Harness, nodeId: string): void {
  const f = h.facts.get(nodeId);
  patchFacts(h, nodeId, {
    configFailures: [
      ...(f?.configFailures ?? []),
      { at: h.now, bootId: f?.bootId, message: "bad config" },
    ],
  });
}

/** The worker gave up sending the node its operation of `kind`. */
export function sendFails(h: Harness, nodeId: string, kind: ActionKind = "upgrade"): void {
  const f = h.facts.get(nodeId);
  patchFacts(h, nodeId, {
    sendFailures: [
      ...(f?.sendFailures ?? []),
      {
        operationId: operationId(h.campaign.id, nodeId, kind),
        at: h.now,
        message: "stream closed",
      },
    ],
  });
}

/** The node's record. */
export function nodeOf(h: Harness, nodeId: string): CampaignNode {
  const n = h.nodes.find((x) => x.nodeId === nodeId);
  if (n === undefined) throw new Error(`no node ${nodeId}`);
  return n;
}

/** Node ids of a batch in canary order. */
export function batchIds(h: Harness, batch: number): string[] {
  return h.nodes
    .filter((n) => n.batch === batch)
    .sort((a, b) => a.order - b.order)
    .map((n) => n.nodeId);
}

/** Node ids currently in `state`. */
export function inState(h: Harness, state: NodeState): string[] {
  return h.nodes.filter((n) => n.state === state).map((n) => n.nodeId);
}

/** Node ids the harness has sent operations of `kind` to. */
export function sent(h: Harness, kind: ActionKind): string[] {
  return h.actions.filter((a) => a.kind === kind).map((a) => a.nodeId);
}

/** Every offered node of the current batch comes back on `version` (reboot). */
export function bringBack(h: Harness, nodeIds: readonly string[], version = NEW): void {
  for (const id of nodeIds) reboot(h, id, version);
}
