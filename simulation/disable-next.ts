/**
 * Disables the nodes next in line: for a share of the scenarios that are not calm, the operator
 * watches a running campaign that offers a few nodes at a time (its concurrency set, made one) and
 * disables the two or three online nodes it would offer next, at one moment, while its slots are
 * full. The next offer then meets
 * a disabled node whose facts the deciding Control has not yet read, and the slot that node
 * frees goes to the next one in line, disabled too: the decision must find both before it
 * offers anything. Drawn from a seed stream of its own, so the rest of a seed's scenario is the
 * same with or without it.
 */
import { createPrng, deriveSeed } from "../agent-sim/prng.js";
import type { CampaignNode } from "../control/campaign/index.js";
import type { Scenario } from "./scenario.js";

const MIN = 60_000;
/** The share of the scenarios that are not calm which get a disable of the next in line. */
const SHARE = 0.4;
/** How often the operator looks again while the campaign has fewer than two nodes in line. */
export const LOOK_AGAIN_MS = 20_000;
/** How many times the operator looks before giving up. */
export const LOOKS = 30;

/** `s` with, sometimes, an operator who disables the nodes one campaign would offer next. */
export function withDisableNext<S extends Scenario>(s: S): S {
  if (s.calm) return s;
  const prng = createPrng(deriveSeed(s.seed, 41));
  if (prng.next() >= SHARE) return s;
  const limited = s.campaigns.filter((c) => (c.spec.concurrency ?? 0) > 0);
  if (limited.length === 0) return s;
  const c = limited[Math.floor(prng.next() * limited.length)] as S["campaigns"][number];
  // One slot: the nodes after the one in flight wait in line, and each offer is the last slot's.
  const spec = { ...c.spec, concurrency: 1 };
  const action = {
    kind: "disable_next" as const,
    at: c.at + 1000 + Math.floor(prng.next() * 3 * MIN),
    campaignId: c.id,
    count: prng.next() < 0.5 ? 2 : 3,
  };
  return {
    ...s,
    campaigns: s.campaigns.map((x) => (x === c ? { ...x, spec } : x)),
    operator: [...s.operator, action].sort((a, b) => a.at - b.at),
  };
}

/**
 * The `count` nodes `nodes` (one campaign's records) would offer next: its batch `batch`'s
 * waiting nodes that are `online`, in canary order (an offline one is passed over); fewer when
 * fewer wait.
 */
export function nextInLine(
  nodes: readonly CampaignNode[],
  batch: number,
  count: number,
  online: (nodeId: string) => boolean,
): string[] {
  return nodes
    .filter((n) => n.batch === batch && n.state === "waiting" && online(n.nodeId))
    .sort((a, b) => a.order - b.order)
    .slice(0, count)
    .map((n) => n.nodeId);
}
