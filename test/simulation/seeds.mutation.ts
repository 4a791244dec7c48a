import { describe } from "vitest";
import { seedCases } from "./seeds.js";

// The simulation's share of a mutation run (vitest.mutation.config.ts): seeds 1…50, pure.
describe("the deterministic campaign simulation, seeds 1…50", () => {
  seedCases(1, 50, 100);
});
