/**
 * The simulated operator answering a campaign left paused (a breach with on_breach=pause, or a
 * pause of theirs without a resume) within {@link PAUSE_ANSWER_MS}: resume (accepting its
 * failures) or abort, with or without rollback. Each answer depends only on the seed, the
 * campaign and how many pauses of it were answered, so faults that move a pause in time do not
 * change what the operator answers.
 */
import { createPrng, deriveSeed } from "../agent-sim/prng.js";
import type { SimWorld } from "./sim-world.js";

/** How long a campaign stays paused before the simulated operator answers. */
const PAUSE_ANSWER_MS = 10 * 60_000;

/**
 * Returns the check to run after every step: it notes when each campaign was first seen
 * paused, and answers those paused for {@link PAUSE_ANSWER_MS} with no command of theirs
 * waiting, waking the Controls for them.
 */
export function pauseAnswerer(world: SimWorld): () => void {
  const { seed, clock, store, controls, say } = world;
  const answers = new Map<string, number>();
  const answerRoll = (campaignId: string): number => {
    const n = answers.get(campaignId) ?? 0;
    answers.set(campaignId, n + 1);
    const key = [...campaignId].reduce(
      (h, ch) => Math.imul(h ^ ch.charCodeAt(0), 16777619),
      2166136261,
    );
    return createPrng(deriveSeed(deriveSeed(seed, 4) ^ key, n)).next();
  };
  const pausedSince = new Map<string, number>();
  return () => {
    for (const [id, c] of store.tables.campaigns) {
      if (c.campaign.phase !== "paused") {
        pausedSince.delete(id);
        continue;
      }
      const since = pausedSince.get(id) ?? clock.ms;
      pausedSince.set(id, since);
      const waiting = store.tables.commands.some(
        (x) => x.campaignId === id && x.appliedAt === null,
      );
      if (waiting || clock.ms - since < PAUSE_ANSWER_MS) continue;
      const roll = answerRoll(id);
      const command =
        roll < 0.5
          ? ({ kind: "resume" } as const)
          : ({ kind: "abort", rollback: roll < 0.8 } as const);
      store.tables.addCommand({
        campaignId: id,
        kind: command.kind,
        rollback: command.kind === "abort" ? command.rollback : false,
        reason: "the operator answers a pause",
        actor: "operator",
        actor_ip: "",
      });
      pausedSince.delete(id);
      world.outcomeChecks.commands.push({
        campaignId: id,
        kind: command.kind,
        at: clock.ms,
        rollback: command.kind === "abort" && command.rollback,
        phase: "paused",
      });
      say(
        `operator answers the pause of ${id}: ${command.kind}${command.kind === "abort" && command.rollback ? " with rollback" : ""}`,
      );
      controls.wake(id);
    }
  };
}
