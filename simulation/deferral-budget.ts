/**
 * Deferral under a download budget. In a share of the scenarios that are not calm, one
 * campaign without gates, operator commands or other variants becomes one batch of 100 % with
 * `--max-downloads 1` and no concurrency limit, over well-behaved agents of its group, each
 * download taking {@link DOWNLOAD_MS} (its agents' step); half of them are busy until
 * {@link BUSY_MS} after the campaign starts. The busy nodes offered first defer; each is offered
 * again at its retry time, its busy spell over, while others still wait for the one download
 * slot: that offer must hold the slot though the node's latest report is the DEFERRED that
 * answered the earlier offer, or a second node downloads beside it (B4).
 *
 * Drawn from a seed stream of its own, so the rest of a seed's scenario is the same with or
 * without it.
 */
import { createPrng, deriveSeed } from "../agent-sim/prng.js";
import type { AgentScript } from "./agent-script.js";
import type { FleetScenario } from "./rollout-scenario.js";
import { groupMembers, pick, takenByOthers, wellBehaved } from "./variant-campaigns.js";

/** The share of the eligible scenarios that get the variant. */
const SHARE = 0.3;
/** How long each download of the campaign's agents takes. */
const DOWNLOAD_MS = 8000;
/** The busy agents are busy until this long after the campaign starts (before their retry). */
const BUSY_MS = 45_000;

/** `s` with, for a share of its seeds, deferral under a download budget (the file's TSDoc). */
export function withDeferralBudget(s: FleetScenario): FleetScenario {
  if (s.calm || s.edge || s.campaigns.length === 0) return s;
  const prng = createPrng(deriveSeed(s.seed, 43));
  if (prng.next() >= SHARE) return s;
  const free = s.campaigns.filter((c) => !takenByOthers(s, c));
  if (free.length === 0) return s;
  const c = pick(prng, free);
  const members = groupMembers(s, c);
  if (members.length < 3) return s;
  const agents = s.agents.map((a): AgentScript => {
    if (!members.includes(a)) return a;
    return wellBehaved(a, c, {
      stepMs: DOWNLOAD_MS,
      ...(prng.next() < 0.5 ? { busyUntil: c.at + BUSY_MS } : {}),
    });
  });
  const spec = {
    ...c.spec,
    batches: [{ percent: 100, minDurationMs: 0 }],
    ramp: undefined,
    windows: undefined,
    concurrency: 0,
    maxDownloads: 1,
    maxDeferMs: 30 * 60_000,
  };
  return {
    ...s,
    agents,
    campaigns: s.campaigns.map((x) => (x === c ? { ...x, spec } : x)),
  };
}
