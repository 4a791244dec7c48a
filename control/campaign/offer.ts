/**
 * Offering the upgrade within the current batch (internal to decide).
 */
import { concurrencyLimit, inFlight, poolLimit } from "./batch-rules.js";
import { deferralHolds, resumeTakenDelivery, skipExpiredDeferrals } from "./deferral.js";
import { downloadLimit, mayBeDownloading } from "./download-budget.js";
import type { Draft } from "./draft.js";
import {
  activeNodes,
  currentBatch,
  emit,
  factsOf,
  nodeById,
  updateNode,
  waitingNodes,
} from "./draft.js";
import type { CampaignNode, NodeFacts } from "./model.js";
import { CAP_UPGRADE } from "./model.js";
import { operationId } from "./operation-id.js";
import { platformUnsupportedMessage } from "./plan.js";
import { windowOpen } from "./windows.js";

/**
 * Settles the current batch's waiting nodes that need no offer: disabled → skipped
 * (node_disabled, before anything else); revoked → skipped (node_revoked); already on the target → succeeded (already_current);
 * known to lack upgrade.v1 → skipped (upgrade_unsupported). Nodes without facts are left
 * waiting (nothing is known about them).
 */
export function settleWithoutOffer(d: Draft): void {
  const b = currentBatch(d);
  // Facts do not change within a decision: a batch's waiting nodes are looked at once.
  if (d.settledBatches.has(b.index)) return;
  d.settledBatches.add(b.index);
  const known = d.changedFacts?.batch === b.index ? d.changedFacts.nodeIds : undefined;
  const candidates =
    known === undefined
      ? waitingNodes(d, b.index)
      : (
          [...known]
            .map((id) => nodeById(d, id))
            .filter((n) => n?.state === "waiting" && n.batch === b.index) as CampaignNode[]
        ).sort((x, y) => x.order - y.order); // canary order, as without the hint
  for (const n of candidates) {
    const f = factsOf(d, n.nodeId);
    if (f === undefined) continue;
    // A deferred node whose Agent took a later delivery is in flight, whatever it runs now.
    if (resumeTakenDelivery(d, n)) continue;
    if (f.disabled) {
      skipDisabled(d, n);
    } else if (f.revoked === true) {
      skipRevokedWaiting(d, n);
    } else if (f.agentVersion === d.target.version) {
      updateNode(
        d,
        n,
        {
          state: "succeeded",
          code: "already_current",
          previousVersion: f.agentVersion,
          version: f.agentVersion,
          message: `already on ${d.target.version}`,
        },
        "already current",
      );
    } else if (!f.capabilities.includes(CAP_UPGRADE)) {
      updateNode(
        d,
        n,
        {
          state: "skipped",
          code: "upgrade_unsupported",
          previousVersion: f.agentVersion,
          message: `the agent did not negotiate ${CAP_UPGRADE}`,
        },
        "upgrade unsupported",
      );
    }
  }
}

/** Settles a waiting node an administrator disabled: it is never offered. */
function skipDisabled(d: Draft, n: CampaignNode): void {
  updateNode(
    d,
    n,
    { state: "skipped", code: "node_disabled", message: "disabled by an administrator" },
    "skipped disabled",
  );
}

/**
 * Settles a waiting node an administrator revoked: it cannot connect before `node reset`, so it
 * is skipped at once (node_revoked), out of the threshold's denominator, rather than holding
 * its batch until it ends skipped node_offline.
 */
function skipRevokedWaiting(d: Draft, n: CampaignNode): void {
  updateNode(
    d,
    n,
    {
      state: "skipped",
      code: "node_revoked",
      message: "revoked by an administrator: it cannot connect before `node reset`",
    },
    "skipped revoked",
  );
}

/**
 * True when the node's known platform is one the target release carries no artifact for (its
 * Hello may name another platform than at the start): the offer could not be built.
 */
function lacksPlatform(d: Draft, f: NodeFacts): boolean {
  const { platforms } = d.target;
  return platforms !== undefined && !!f.platform && !platforms.includes(f.platform);
}

/**
 * Settles a waiting node whose platform the release lacks: skipped `platform_unsupported`, as
 * the plan skips such nodes at the start; never offered, never a failure.
 */
function skipPlatform(d: Draft, n: CampaignNode, platform: string): void {
  updateNode(
    d,
    n,
    {
      state: "skipped",
      code: "platform_unsupported",
      message: platformUnsupportedMessage(d.target.version, platform),
    },
    "skipped platform unsupported",
  );
}

/** True when an offer could reach the node now: online, with a known boot id. */
function reachable(f: NodeFacts | undefined): f is NodeFacts & { bootId: string } {
  return f?.online === true && f.bootId !== undefined;
}

/** True when the node counts as offline: its facts say so, or it has none (never seen). */
function isOffline(f: NodeFacts | undefined): boolean {
  return f === undefined || f.offline;
}

/**
 * Offers the upgrade to the current batch's waiting nodes in canary order while slots are free:
 * at most `concurrency` in flight in the batch and at most the pool's budget in flight in each
 * pool, counting the nodes other campaigns have in flight there (`DecideInput.pools`), and at
 * most `maxDownloads` of the campaign's nodes downloading (`download-budget.ts`). A disabled node the offering reaches is skipped (node_disabled), whatever else is known
 * about it (its facts may have changed after the batch's first look); one whose platform the
 * release lacks is skipped `platform_unsupported` (its Hello may name another platform than at
 * the start). Nodes that cannot be
 * reached now (offline or reconnecting) and nodes whose pool is full are passed over (a later
 * node may still go). When afterwards nothing is in flight in the
 * batch, no waiting node is reachable and every node still waiting is offline (a reconnecting
 * one is not), those are skipped (node_offline): they could only wait forever. Outside every
 * maintenance window of the campaign nothing is offered (and nothing skipped as offline); a
 * deferred node whose max defer ran out is skipped `deferred` then too (skipping sends nothing,
 * and its batch would otherwise wait for the next window).
 */
export function offerNext(d: Draft): void {
  const b = currentBatch(d);
  const spec = d.campaign.spec;
  // Nothing waits in the batch: there is nothing to offer or to skip, and the counts below
  // would be for nothing. Most decisions of a large batch are such (its reports and Hellos):
  // the counts walk every active node, 72 % of a decision's time in a 7,500-node batch.
  if (waitingNodes(d, b.index).length === 0) return;
  // A max defer runs out whether or not a window is open (skipping offers nothing), and a node
  // that took a later delivery is in flight whatever the time: both before the window's test
  // and before counting what is in flight.
  skipExpiredDeferrals(
    d,
    waitingNodes(d, b.index).filter((n) => n.deferredAt !== undefined),
  );
  if (!windowOpen(spec.windows, d.now)) return;
  let batchInFlight = activeNodes(d, b.index).filter((n) => inFlight(n, d.now)).length;
  // In flight per pool over every campaign: the others' (given) plus this one's.
  const poolInFlight = new Map<string, number>();
  for (const [pool, load] of d.pools ?? []) poolInFlight.set(pool, load.inFlightElsewhere);
  for (const n of activeNodes(d)) {
    if (inFlight(n, d.now)) poolInFlight.set(n.pool, (poolInFlight.get(n.pool) ?? 0) + 1);
  }
  const limit = concurrencyLimit(spec.concurrency);
  if (batchInFlight >= limit) return;
  const maxDownloads = downloadLimit(spec);
  // Without --max-downloads the count can never reach the limit: not counted.
  let downloading = Number.isFinite(maxDownloads)
    ? activeNodes(d).filter((n) => mayBeDownloading(n, factsOf(d, n.nodeId))).length
    : 0;
  if (downloading >= maxDownloads) return;
  for (const n of waitingNodes(d, b.index)) {
    if (batchInFlight >= limit || downloading >= maxDownloads) break;
    // A deferred node waits for its retry time, then for a free slot like any other.
    if (deferralHolds(n, d.now)) continue;
    const f = factsOf(d, n.nodeId);
    if (f?.disabled === true) {
      skipDisabled(d, n);
      continue;
    }
    if (!reachable(f)) continue;
    if (lacksPlatform(d, f)) {
      skipPlatform(d, n, f.platform as string);
      continue;
    }
    const poolSize = d.pools?.get(n.pool)?.size ?? d.poolSizes.get(n.pool) ?? 1;
    const poolMax = poolLimit(poolSize, spec.disruptionBudgetPercent);
    const inPool = poolInFlight.get(n.pool) ?? 0;
    if (inPool >= poolMax) continue;
    const id = operationId(d.campaign.id, n.nodeId, "upgrade");
    updateNode(
      d,
      n,
      {
        state: "offered",
        upgradeOperationId: id,
        offeredAt: d.now,
        offerBootId: f.bootId,
        previousVersion: f.agentVersion,
        reconnectDeadline: d.now + spec.reconnectTimeoutMs,
        deferRetryAt: undefined,
        message: undefined,
      },
      `offered ${d.target.version}`,
    );
    emit(d, {
      kind: "upgrade",
      nodeId: n.nodeId,
      operationId: id,
      version: d.target.version,
      sequence: d.target.sequence,
    });
    batchInFlight++;
    downloading++;
    poolInFlight.set(n.pool, inPool + 1);
  }
  if (activeNodes(d, b.index).some((n) => inFlight(n, d.now))) return;
  const waiting = waitingNodes(d, b.index);
  if (waiting.length === 0) return;
  for (const n of waiting) {
    const f = factsOf(d, n.nodeId);
    if (reachable(f) || !isOffline(f)) return;
  }
  for (const n of waiting) {
    updateNode(
      d,
      n,
      {
        state: "skipped",
        code: "node_offline",
        message: "offline whenever a slot was free, and nothing else was left to do",
      },
      "skipped offline",
    );
  }
}
