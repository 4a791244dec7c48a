/**
 * Releases whose health checks fail on some nodes: in a share of the seeds, some of the agents
 * scripted to succeed instead fail the target's health checks (`health_fail`: they boot on it,
 * a check fails before they connect, and their supervisor reverts them). A seed stream of its
 * own, so the rest of a scenario is drawn as before.
 */
import { createPrng, deriveSeed } from "../agent-sim/prng.js";
import type { AgentScript } from "./agent-script.js";

/** The share of seeds with failing health checks, and of their succeeding agents that fail them. */
export const HEALTH_FAIL_SEEDS = 0.3;
const HEALTH_FAIL_AGENTS = 0.2;

/** `agents` of `seed`'s scenario, some `succeed` scripts turned into `health_fail` in a share of seeds. */
export function withHealthChecks(seed: number, agents: readonly AgentScript[]): AgentScript[] {
  const prng = createPrng(deriveSeed(seed, 23));
  if (prng.next() >= HEALTH_FAIL_SEEDS) return [...agents];
  return agents.map((a) =>
    a.behaviour === "succeed" && prng.next() < HEALTH_FAIL_AGENTS
      ? { ...a, behaviour: "health_fail" }
      : a,
  );
}
