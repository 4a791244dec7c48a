/**
 * Deferral (internal to decide): a node may answer an offer DEFERRED ("not now", with a
 * reason). It is then neither failed nor in flight: it goes back to waiting, is offered again
 * no sooner than {@link deferRetryMs} later and only when a slot is free, and once
 * `maxDeferMs` have passed since its first deferral in the campaign it ends skipped with code
 * `deferred` (at its next DEFERRED answer, or while it waits for a slot). A node still deferring
 * when the rest of its batch is ready to pass carries over to the next batch
 * (`carry-over.ts`), so one busy node does not hold the fleet for its max defer.
 */
import type { Draft } from "./draft.js";
import { factsOf, updateNode } from "./draft.js";
import type { CampaignNode, ObservedReport } from "./model.js";
import { isEndedPhase } from "./model.js";
import { minutes, reportFor } from "./reports.js";
import type { CampaignSpec } from "./spec.js";

/** How long a node may keep deferring when its campaign names no `maxDeferMs`: one hour. */
export const DEFAULT_MAX_DEFER_MS = 3_600_000;

/**
 * A deferred node is offered again no sooner than this after its answer: one minute, or a
 * quarter of the campaign's max defer when that is shorter (at least a second).
 */
export const DEFER_RETRY_MS = 60_000;

/** How long after a DEFERRED answer the node may be offered again (see {@link DEFER_RETRY_MS}). */
export function deferRetryMs(spec: CampaignSpec): number {
  return Math.min(DEFER_RETRY_MS, Math.max(1000, Math.floor(maxDeferOf(spec) / 4)));
}

/** The campaign's deferral limit. */
export function maxDeferOf(spec: CampaignSpec): number {
  return spec.maxDeferMs ?? DEFAULT_MAX_DEFER_MS;
}

/** When a deferred node's deferral runs out (undefined for a node that never deferred). */
export function deferralEnds(spec: CampaignSpec, n: CampaignNode): number | undefined {
  return n.deferredAt === undefined ? undefined : n.deferredAt + maxDeferOf(spec);
}

/** True while a deferred waiting node must not be offered yet (its retry time is ahead). */
export function deferralHolds(n: CampaignNode, now: number): boolean {
  return n.deferRetryAt !== undefined && now < n.deferRetryAt;
}

/**
 * True when `r` is a DEFERRED answer to the node's current offer. A node that never deferred had
 * no earlier offer to answer, so its DEFERRED answers this one. A node that did defer answers
 * its current offer with a DEFERRED the database wrote after the one it was last judged on
 * (`r.seq` above `n.deferredSeq`): the same report read again (a copy read before the re-offer
 * reset its outbox row) answered the earlier offer. The report's stamp is never compared with
 * the offer's time: the first is the clock of the Control holding the node's stream, the second
 * the leader's (docs/decisions.md, "One clock for ordering across Controls"). Only a report or a
 * record from a release that did not number reports falls back on the stamps.
 */
export function defersCurrentOffer(n: CampaignNode, r: ObservedReport): boolean {
  if (r.phase !== "DEFERRED") return false;
  if ((n.deferrals ?? 0) === 0) return true;
  if (r.seq !== undefined && n.deferredSeq !== undefined) return r.seq > n.deferredSeq;
  return r.at >= (n.offeredAt ?? 0);
}

/**
 * Judges a node that answered its offer DEFERRED: back to waiting with its first deferral time,
 * its retry time and the reason as its message; skipped `deferred` when its deferral ran out;
 * canceled (`aborted`, `release_yanked` after a yank, or `batch_failed` after another breach)
 * when the campaign ended while the offer was out, as its waiting nodes were then.
 */
export function judgeDeferred(d: Draft, n: CampaignNode, r: ObservedReport): void {
  if (isEndedPhase(d.campaign.phase)) {
    // The campaign stopped (aborted, or failed on a breach) while this offer was out: its
    // waiting nodes were canceled then, and a node that will not take it now is canceled too.
    const { code: stop } = d.campaign;
    const code = stop === "aborted" || stop === "release_yanked" ? stop : "batch_failed";
    updateNode(
      d,
      n,
      {
        state: "canceled",
        code,
        message: `canceled: deferred after the campaign ${d.campaign.phase}`,
      },
      "canceled",
    );
    return;
  }
  const first = n.deferredAt ?? d.now;
  const limit = maxDeferOf(d.campaign.spec);
  const reason = r.message || NO_REASON;
  if (d.now >= first + limit) {
    skipDeferred(d, n, first, reason);
    return;
  }
  updateNode(
    d,
    n,
    {
      state: "waiting",
      deferredAt: first,
      deferRetryAt: d.now + deferRetryMs(d.campaign.spec),
      deferrals: (n.deferrals ?? 0) + 1,
      deferredSeq: r.seq,
      reconnectDeadline: undefined,
      offerBootId: undefined,
      message: deferredMessage(reason, n.carriedFrom),
    },
    "deferred",
  );
}

/**
 * Puts a deferred waiting node back in flight when its Agent took a later delivery of the
 * operation it deferred (it forgets a deferred operation, so a second delivery of the same offer
 * — sent on two streams, or re-sent before the DEFERRED was acknowledged — is applied once it is
 * no longer busy): a report on its upgrade other than DEFERRED, written after the DEFERRED it was
 * judged on (a higher `seq`). The node becomes `offered` from now (the leader's clock: the
 * offer time and reconnect deadline from when the leader saw it take the delivery), with the
 * boot that reported as its offer boot; the next judging reads the report (applying, failed, …).
 * Nothing is sent: the Agent holds the operation. True when it did. A later DEFERRED is a
 * duplicate's answer to the same offer: the node's `deferredSeq` moves to it, so it is not taken
 * for the answer to the re-offer (the leader's copy may still hold it after the re-offer reset
 * the row), and the node still waits. A deferred node whose Hello is on the target took it too,
 * whatever its reports say (they may not have reached this Control yet): `offered` with no
 * offer boot, so the next judging finds it back on the target (verifying, its previous version
 * kept: a rollback reaches it), never `already_current`.
 */
export function resumeTakenDelivery(d: Draft, n: CampaignNode): boolean {
  if (n.state !== "waiting" || n.upgradeOperationId === undefined) return false;
  const f = factsOf(d, n.nodeId);
  const r = reportFor(f, n.upgradeOperationId);
  if (
    n.deferredAt !== undefined &&
    f?.agentVersion === d.target.version &&
    n.previousVersion !== d.target.version
  ) {
    // A DEFERRED written since is a duplicate's answer to the same offer, not to this one.
    const seq = r?.phase === "DEFERRED" ? r.seq : undefined;
    updateNode(
      d,
      n,
      {
        state: "offered",
        offeredAt: d.now,
        offerBootId: undefined,
        reconnectDeadline: d.now + d.campaign.spec.reconnectTimeoutMs,
        deferRetryAt: undefined,
        message: undefined,
        ...(seq !== undefined && seq > (n.deferredSeq ?? 0) ? { deferredSeq: seq } : {}),
      },
      "back on the target after deferring: took a later delivery of the offer",
    );
    return true;
  }
  if (n.deferredSeq === undefined) return false;
  if (r === undefined || r.seq === undefined || r.seq <= n.deferredSeq) return false;
  if (r.phase === "DEFERRED") {
    // A second answer to the offer it deferred (a duplicate delivery, deferred too): it
    // answers no later offer, so the node's record moves past it and it still waits.
    updateNode(d, n, { deferredSeq: r.seq }, "deferred the offer again");
    return false;
  }
  updateNode(
    d,
    n,
    {
      state: "offered",
      offeredAt: d.now,
      offerBootId: r.bootId ?? f?.bootId,
      reconnectDeadline: d.now + d.campaign.spec.reconnectTimeoutMs,
      deferRetryAt: undefined,
      message: undefined,
    },
    "took a later delivery of the offer it deferred",
  );
  return true;
}

/**
 * Settles the deferred waiting nodes of `nodes`: back in flight when the Agent took a later
 * delivery ({@link resumeTakenDelivery}), else skipped when the deferral ran out by now.
 */
export function skipExpiredDeferrals(d: Draft, nodes: readonly CampaignNode[]): void {
  for (const n of nodes) {
    if (resumeTakenDelivery(d, n)) continue;
    const ends = deferralEnds(d.campaign.spec, n);
    if (ends === undefined || d.now < ends) continue;
    skipDeferred(d, n, n.deferredAt as number, deferredReason(n));
  }
}

function skipDeferred(d: Draft, n: CampaignNode, first: number, reason: string): void {
  const limit = maxDeferOf(d.campaign.spec);
  updateNode(
    d,
    n,
    {
      state: "skipped",
      code: "deferred",
      deferredAt: first,
      deferRetryAt: undefined,
      reconnectDeadline: undefined,
      message: `deferred for ${minutes(limit)} or more (the campaign's max defer): ${reason}`,
    },
    "skipped deferred",
  );
}

/** The reason of a DEFERRED answer that gave none. */
const NO_REASON = "the node asked to be offered later";

/** A deferred node's message: why it deferred, and the batch it was carried over from. */
export function deferredMessage(reason: string, carriedFrom: number | undefined): string {
  return carriedFrom === undefined
    ? `deferred: ${reason}`
    : `deferred: ${reason} (carried over from batch ${carriedFrom + 1})`;
}

/** Why a deferred node deferred, read back from its message ({@link deferredMessage}). */
export function deferredReason(n: CampaignNode): string {
  const m = /^deferred: (.*?)(?: \(carried over from batch \d+\))?$/s.exec(n.message ?? "");
  return m?.[1] || NO_REASON;
}
