/**
 * A pure simulation of a fleet of agents around `decide`, for property tests: scripted agent
 * behaviours, an event queue in virtual time, admin commands at given times. No timers, no I/O.
 */

import { createCampaign } from "../../../control/campaign/create.js";
import type {
  Action,
  AdminCommand,
  CampaignNode,
  CampaignSpecInput,
  CampaignState,
  Candidate,
  Decision,
  JudgedMark,
  NodeFacts,
  ObservedPhase,
  PoolLoad,
  Target,
} from "../../../control/campaign/index.js";
import {
  applyDecision,
  decide,
  operationId,
  planCampaign,
  resolveSpec,
} from "../../../control/campaign/index.js";
import { NEW, OLD } from "./harness.js";

/** How a simulated agent answers an upgrade. */
export type Behaviour =
  | "succeed"
  | "refuse"
  | "fail"
  | "never_return"
  | "revert"
  | "config_fail"
  /** Back on the target, then its stream ends for good (the release killed the host). */
  | "lost_after_upgrade"
  /** Reports FAILED, then says Hello on the target with a new boot, in the same instant. */
  | "fail_then_target"
  | "lose_heartbeat"
  | "offline"
  | "late_online"
  | "reconnecting"
  | "disabled"
  | "disable_later"
  | "no_cap"
  | "current"
  | "send_fail";

/** How a simulated agent answers a rollback. */
export type RollbackBehaviour = "reinstate" | "fail" | "silent";

/** One simulated node. */
export interface SimNode {
  readonly behaviour: Behaviour;
  readonly rollback: RollbackBehaviour;
  readonly pool: string;
  readonly canary: boolean;
  /** Delay of each agent step, ms. */
  readonly stepMs: number;
  /** Time an upgrade's restart takes, ms. */
  readonly restartMs: number;
  readonly configGraceCapable: boolean;
}

/** A whole scenario. */
export interface Scenario {
  readonly nodes: readonly SimNode[];
  readonly spec: Partial<CampaignSpecInput>;
  readonly commands: readonly { readonly at: number; readonly command: AdminCommand }[];
  /**
   * The other campaigns' load per pool (`DecideInput.pools`), until `poolsFreeAt`; from then on
   * nothing is in flight elsewhere (the sizes stay). Undefined: the campaign is alone.
   */
  readonly pools?: ReadonlyMap<string, PoolLoad> | undefined;
  readonly poolsFreeAt?: number | undefined;
}

/** One decision as the property checks see it. */
export interface Step {
  readonly now: number;
  readonly before: { readonly campaign: CampaignState; readonly nodes: readonly CampaignNode[] };
  readonly after: { readonly campaign: CampaignState; readonly nodes: readonly CampaignNode[] };
  readonly decision: Decision;
  readonly facts: ReadonlyMap<string, NodeFacts>;
  readonly target: Target;
  /** The pools' load this decision was given. */
  readonly pools: ReadonlyMap<string, PoolLoad> | undefined;
}

interface Event {
  readonly at: number;
  readonly seq: number;
  readonly run: () => void;
}

/**
 * Runs the scenario until the campaign finished or `maxSteps` decisions, calling `check` after
 * every decision. Time jumps to the next of: agent event, admin command, the decision's wakeAt.
 * Returns the last state and whether the engine stalled (nothing left to wake it while not done).
 */
export function simulate(s: Scenario, check: (step: Step) => void, maxSteps = 3000) {
  const target: Target = { version: NEW, sequence: 2 };
  const ids = s.nodes.map((_, i) => `n${i}`);
  const candidates: Candidate[] = s.nodes.map((n, i) => ({
    id: ids[i]!,
    labels: n.canary ? { canary: "true" } : {},
    pool: n.pool,
    enabled: true,
    everConnected: true,
    capabilities:
      n.behaviour === "no_cap"
        ? []
        : n.configGraceCapable
          ? ["upgrade.v1", "config.v1"]
          : ["upgrade.v1"],
    agentVersion: n.behaviour === "current" ? NEW : OLD,
  }));
  const spec = resolveSpec({ targetVersion: NEW, ...s.spec });
  const plan = planCampaign(spec, candidates);
  let { campaign, nodes } = createCampaign({ id: "sim", spec, plan, target, now: 0 });
  const facts = new Map<string, NodeFacts>();
  candidates.forEach((c, i) => {
    const b = s.nodes[i]!.behaviour;
    const online = b !== "offline" && b !== "late_online" && b !== "reconnecting";
    facts.set(c.id, {
      nodeId: c.id,
      online,
      offline: b === "offline" || b === "late_online",
      disabled: b === "disabled",
      bootId: `${c.id}-boot-0`,
      agentVersion: c.agentVersion,
      capabilities: c.capabilities,
      lastHeartbeatAt: 0,
      reports: [],
      configFailures: [],
      sendFailures: [],
    });
  });
  const events: Event[] = [];
  let seq = 0;
  let pools = s.pools;
  let boots = 0;
  const at = (time: number, run: () => void) => {
    events.push({ at: time, seq: seq++, run });
  };
  /** The time of the event being run (or of the decision whose actions are delivered). */
  let clock = 0;
  /**
   * Applies a change to a node's facts; a node without a stream counts as offline at once. A node
   * whose stream opens is handed the operations held for it (the outbox re-sends on reconnect).
   */
  const patch = (id: string, p: Partial<NodeFacts>) => {
    const liveness = p.online === undefined ? {} : { offline: !p.online };
    facts.set(id, { ...facts.get(id)!, ...p, ...liveness });
    if (p.online === true) pump(id);
  };
  const reportOp = (id: string, opId: string, phase: ObservedPhase, now: number) => {
    const f = facts.get(id)!;
    patch(id, {
      reports: [
        ...f.reports.filter((r) => r.operationId !== opId),
        { operationId: opId, phase, version: "", code: "", message: "", at: now, bootId: f.bootId },
      ],
    });
  };
  const rebootOn = (id: string, version: string) => {
    boots++;
    patch(id, {
      online: true,
      offline: false,
      bootId: `${id}-boot-${boots}`,
      agentVersion: version,
    });
  };
  if (s.pools !== undefined && s.poolsFreeAt !== undefined) {
    const sizes = [...s.pools].map(([pool, l]) => [pool, { size: l.size, inFlightElsewhere: 0 }]);
    at(s.poolsFreeAt, () => {
      pools = new Map(sizes as [string, PoolLoad][]);
    });
  }
  s.nodes.forEach((n, i) => {
    if (n.behaviour === "late_online" || n.behaviour === "reconnecting")
      at(n.restartMs * 3, () => patch(ids[i]!, { online: true, offline: false }));
    // Disabled by an administrator while the campaign runs (offered or not by then).
    if (n.behaviour === "disable_later") at(n.stepMs * 2, () => patch(ids[i]!, { disabled: true }));
  });

  /**
   * Operations held for each agent. Like the outbox, the sim hands an operation over only while
   * the node's stream is open and re-sends it when the node reconnects; like an agent, a node
   * handles one operation at a time: one that arrives while an upgrade is in progress (until the
   * node is back after its restart, or reported the end of it) waits for the upgrade to end.
   */
  const inbox = new Map<string, Action[]>();
  const busy = new Set<string>();
  const pump = (id: string) => {
    const queue = inbox.get(id) ?? [];
    while (queue.length > 0 && !busy.has(id) && facts.get(id)!.online) {
      handle(queue.shift()!, clock);
    }
  };
  const done = (id: string) => {
    busy.delete(id);
    pump(id);
  };
  const deliver = (a: Action, now: number) => {
    if (a.kind === "confirm") return;
    clock = now;
    inbox.set(a.nodeId, [...(inbox.get(a.nodeId) ?? []), a]);
    pump(a.nodeId);
  };

  const handle = (a: Action, now: number) => {
    const i = ids.indexOf(a.nodeId);
    const n = s.nodes[i]!;
    const id = a.nodeId;
    const t = now + n.stepMs;
    if (a.kind === "confirm") return;
    if (a.kind === "rollback") {
      // What a real agent does (agent-sim/operations.ts): already on the version it is asked
      // to reinstate (it never applied the upgrade, or reverted itself) → REINSTATED, nothing
      // changes; on another version (the target) → it reinstates its previous release and says
      // REINSTATED once back on it. A "silent" agent never answers; a "fail" one reports FAILED.
      if (n.rollback === "reinstate") {
        at(t, () => {
          reportOp(id, a.operationId, "REINSTATED", t);
          if (facts.get(id)!.agentVersion !== (a.version ?? OLD)) rebootOn(id, a.version ?? OLD);
        });
      } else if (n.rollback === "fail") at(t, () => reportOp(id, a.operationId, "FAILED", t));
      return;
    }
    const op = a.operationId;
    switch (n.behaviour) {
      case "send_fail":
        at(now, () => patch(id, { sendFailures: [{ operationId: op, at: now, message: "gone" }] }));
        return;
      case "refuse":
        at(t, () => reportOp(id, op, "REFUSED", t));
        return;
      case "fail":
        busy.add(id);
        at(t, () => reportOp(id, op, "ACCEPTED", t));
        at(t + n.stepMs, () => {
          reportOp(id, op, "FAILED", t + n.stepMs);
          done(id);
        });
        return;
      case "fail_then_target":
        busy.add(id);
        at(t, () => reportOp(id, op, "ACCEPTED", t));
        at(t + n.stepMs, () => {
          reportOp(id, op, "FAILED", t + n.stepMs);
          rebootOn(id, NEW);
          done(id);
        });
        return;
      case "lose_heartbeat":
        busy.add(id);
        at(t, () => reportOp(id, op, "ACCEPTED", t));
        at(t + n.stepMs, () => patch(id, { online: false, offline: true }));
        return;
      default: {
        busy.add(id);
        at(t, () => reportOp(id, op, "ACCEPTED", t));
        at(t + n.stepMs, () => {
          reportOp(id, op, "RESTARTING", t + n.stepMs);
          patch(id, { online: false, offline: true });
        });
        const back = t + n.stepMs + n.restartMs;
        if (n.behaviour === "never_return") return;
        at(back, () => {
          rebootOn(id, n.behaviour === "revert" ? OLD : NEW);
          done(id);
        });
        if (n.behaviour === "lost_after_upgrade") {
          at(back + n.stepMs, () => patch(id, { online: false, offline: true }));
        }
        if (n.behaviour === "config_fail") {
          at(back + n.stepMs, () => {
            const f = facts.get(id)!;
            patch(id, {
              configFailures: [
                ...f.configFailures,
                { at: back + n.stepMs, bootId: f.bootId, message: "bad" },
              ],
            });
          });
        }
      }
    }
  };

  const pending = [...s.commands].sort((a, b) => a.at - b.at);
  // The facts as of the last decision that looked at the waiting nodes: what a truthful
  // changed-facts hint is measured against (undefined: no such decision yet, every node changed).
  let looked: Map<string, NodeFacts> | undefined;
  // The previous decision's mark and the facts it read: what incremental judging is given.
  let judged: { mark: JudgedMark; facts: Map<string, NodeFacts> } | undefined;
  let now = 0;
  let stalled = false;
  let steps = 0;
  for (; steps < maxSteps; steps++) {
    events.sort((a, b) => a.at - b.at || a.seq - b.seq);
    while (events.length > 0 && events[0]!.at <= now) {
      const e = events.shift()!;
      clock = e.at;
      e.run();
    }
    const commands: AdminCommand[] = [];
    while (pending.length > 0 && pending[0]!.at <= now) commands.push(pending.shift()!.command);
    const decision = decide({ campaign, nodes, facts, now, target, commands, pools });
    // decide stays level-based: a truthful changed-facts hint never changes the decision.
    const changedFacts =
      looked === undefined
        ? undefined
        : new Set([...facts.keys()].filter((id) => facts.get(id) !== looked?.get(id)));
    const hinted = decide({ campaign, nodes, facts, now, target, commands, pools, changedFacts });
    if (JSON.stringify(hinted) !== JSON.stringify(decision)) {
      throw new Error(`a truthful changed-facts hint changed the decision at ${now}`);
    }
    if (judged !== undefined) {
      const since = judged;
      const changedFacts = new Set(
        [...facts.keys()].filter((id) => facts.get(id) !== since.facts.get(id)),
      );
      const incremental = decide({
        ...{ campaign, nodes, facts, now, target, commands, pools },
        judgedSince: { mark: since.mark, changedFacts },
      });
      if (JSON.stringify(incremental) !== JSON.stringify(decision)) {
        throw new Error(`incremental judging changed the decision at ${now}`);
      }
    }
    judged =
      decision.judged === undefined ? undefined : { mark: decision.judged, facts: new Map(facts) };
    if (decision.lookedAtWaiting) looked = new Map(facts);
    const after = applyDecision(campaign, nodes, decision);
    check({
      now,
      before: { campaign, nodes },
      after,
      decision,
      facts: new Map(facts),
      target,
      pools,
    });
    campaign = after.campaign;
    nodes = after.nodes;
    for (const a of decision.actions) deliver(a, now);
    if (campaign.finishedAt !== undefined && events.length === 0 && pending.length === 0) break;
    const next = Math.min(
      decision.wakeAt ?? Infinity,
      ...events.map((e) => e.at),
      pending[0]?.at ?? Infinity,
    );
    if (next === Infinity) {
      stalled = campaign.finishedAt === undefined && campaign.phase !== "paused";
      break;
    }
    now = Math.max(now + 1, next);
  }
  return {
    campaign,
    nodes,
    /** The agents' facts at the end (what each runs). */
    facts,
    stalled,
    steps,
    operationIdOf: (id: string) => operationId("sim", id, "upgrade"),
  };
}
