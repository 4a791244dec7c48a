/**
 * Nodes that say "not now": in a share of the seeds, some agents scripted to succeed are busy
 * until a seeded virtual time and answer every offer before it DEFERRED (some past any
 * campaign's max defer), and campaigns get a seeded `maxDeferMs`. A seed stream of its own, so
 * the rest of a scenario is drawn as before.
 */
import { createPrng, deriveSeed, type Prng } from "../agent-sim/prng.js";
import type { CampaignSpecInput } from "../control/campaign/index.js";
import type { AgentScript } from "./agent-script.js";

const MIN = 60_000;
const int = (prng: Prng, lo: number, hi: number) => lo + Math.floor(prng.next() * (hi - lo + 1));

/** `agents` of `seed`'s scenario, some succeeding ones busy until a seeded time. */
export function withDeferrals(seed: number, agents: readonly AgentScript[]): AgentScript[] {
  const prng = createPrng(deriveSeed(seed, 24));
  if (prng.next() >= 0.3) return [...agents];
  return agents.map((a) =>
    a.behaviour === "succeed" && prng.next() < 0.25
      ? { ...a, busyUntil: int(prng, 1, prng.next() < 0.3 ? 180 : 30) * MIN }
      : a,
  );
}

/** `spec` of the `index`-th campaign of `seed`, with a seeded max defer or the default. */
export function withMaxDefer(
  seed: number,
  index: number,
  spec: CampaignSpecInput,
): CampaignSpecInput {
  const prng = createPrng(deriveSeed(deriveSeed(seed, 25), index));
  const roll = prng.next();
  if (roll < 0.4) return spec;
  const maxDeferMs = roll < 0.5 ? 0 : int(prng, 1, 20) * MIN;
  return { ...spec, maxDeferMs };
}
