/**
 * Disables mid-batch: for a share of the scenarios that are not calm, the operator disables three
 * nodes of one campaign's group (two where it has only two) at the same moment, while its
 * batches run (so two waiting nodes of one batch, next to each other in the offer order, may go
 * at once). Drawn from a seed stream of its own, so the rest of a seed's
 * scenario is the same with or without it.
 */
import { createPrng, deriveSeed } from "../agent-sim/prng.js";
import type { Scenario } from "./scenario.js";

const MIN = 60_000;
/** The share of the scenarios that are not calm which get a pair of disables. */
const SHARE = 0.3;

/** The scenario with, sometimes, two or three nodes of one campaign disabled at once. */
export function withDisablePairs(s: Scenario): Scenario {
  const prng = createPrng(deriveSeed(s.seed, 11));
  if (s.calm || s.campaigns.length === 0 || prng.next() >= SHARE) return s;
  const c = s.campaigns[
    Math.floor(prng.next() * s.campaigns.length)
  ] as Scenario["campaigns"][number];
  const group = c.spec.selector?.labels?.group;
  const members = s.agents.filter((a) => group === undefined || a.labels.group === group);
  if (members.length < 2) return s;
  const first = Math.floor(prng.next() * members.length);
  const second = (first + 1 + Math.floor(prng.next() * (members.length - 1))) % members.length;
  const at = c.at + 1000 + Math.floor(prng.next() * 10 * MIN);
  // A third node with them: two nodes next to each other in the offer order are then likelier,
  // so the slot the first one frees can go to another disabled node in the same decision.
  const rest = members.map((_, i) => i).filter((i) => i !== first && i !== second);
  const third = rest.length === 0 ? [] : [rest[Math.floor(prng.next() * rest.length)] as number];
  const disables = [first, second, ...third].map((i) => ({
    kind: "disable" as const,
    at,
    nodeId: (members[i] as Scenario["agents"][number]).id,
  }));
  return { ...s, operator: [...s.operator, ...disables].sort((a, b) => a.at - b.at) };
}
