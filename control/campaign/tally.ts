/**
 * Per-batch running counts of a draft (internal): kept current as node records change, so that
 * breach, pass and finish read counts instead of the batch's nodes.
 */
import type { CampaignNode } from "./model.js";
import { isFailure, isFinal } from "./model.js";

/** Running counts of one batch's nodes. */
export interface BatchTally {
  waiting: number;
  failed: number;
  skipped: number;
  /** Canceled nodes (one may have taken the offer after all: a rollback reaches it). */
  canceled: number;
  /** Nodes not final (waiting or active). */
  open: number;
  /** The latest settle time among its final nodes (finishedAt, else stateChangedAt). */
  lastFinalSettle: number | undefined;
}

/** A tally of no node. */
export function emptyTally(): BatchTally {
  return { waiting: 0, failed: 0, skipped: 0, canceled: 0, open: 0, lastFinalSettle: undefined };
}

/** Adds (`sign` 1) or removes (-1) one node's record from a tally's counts. */
export function count(t: BatchTally, n: CampaignNode, sign: 1 | -1): void {
  if (n.state === "waiting") t.waiting += sign;
  if (isFailure(n.state)) t.failed += sign;
  if (n.state === "skipped") t.skipped += sign;
  if (n.state === "canceled") t.canceled += sign;
  if (!isFinal(n.state)) t.open += sign;
}

/** Adds one node's record to a tally: its counts, and its settle time when it is final. */
export function addToTally(t: BatchTally, n: CampaignNode): void {
  count(t, n, 1);
  if (isFinal(n.state)) t.lastFinalSettle = later(t.lastFinalSettle, finalSettle(n));
}

function later(a: number | undefined, b: number): number {
  return a === undefined || b > a ? b : a;
}

function finalSettle(n: CampaignNode): number {
  return n.finishedAt ?? n.stateChangedAt;
}
