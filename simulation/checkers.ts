/**
 * What a registered checker of the simulation is (`checker-registry.ts`): the invariants it
 * judges, what it checks after every step, and what it checks at the end of a run whose
 * scenario finished. A checker is made once per run, over the run's world, and keeps what it
 * needs between steps in its closure. It judges from the simulated actors' history
 * (`history.ts`) and their records (`ground-truth.ts`), from the scenario and the operator's own
 * log, and reads Control's tables only for what Control claims (a phase, a node's state, who
 * belongs to which batch), never for a fact an agent can tell.
 */
import type { SimWorld } from "./sim-world.js";

/** One registered checker, made for one run. */
export interface Checker {
  /** The invariants it judges, by their names in docs/campaign-engine.md. */
  readonly invariants: readonly string[];
  /** The violations after a step at `now` (empty when it held). */
  readonly step?: (now: number) => string[];
  /** The violations at the end (`now`) of a run whose scenario finished. */
  readonly end?: (now: number) => string[];
}

/** What every checker of a run may know beyond the world. */
export interface RunFacts {
  /** Whether any Control goes down, or loses its lease, in this run. */
  readonly faulty: boolean;
}

/** Makes a run's checker. */
export type CheckerFactory = (world: SimWorld, run: RunFacts) => Checker;
