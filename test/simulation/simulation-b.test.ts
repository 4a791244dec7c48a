import { describe } from "vitest";
import { seedCases } from "./seeds.js";

// Half of the simulation's CI share (the other half runs in simulation-a, in parallel).
describe("the deterministic campaign simulation, seeds 301…600", () => {
  seedCases(301, 300, 1000);
});
