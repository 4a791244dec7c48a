import { describe } from "vitest";
import { seedCases } from "./seeds.js";

// Half of the simulation's CI share (the other half runs in simulation-b, in parallel).
describe("the deterministic campaign simulation, seeds 1…300", () => {
  seedCases(1, 300, 1000);
});
