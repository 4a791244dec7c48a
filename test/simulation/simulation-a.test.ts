import { describe } from "vitest";
import { seedCases } from "./seeds.js";

// Half of the simulation's CI share (the other half runs in the other file, in parallel). 200
// seeds: CI must stay under 30 minutes, and generation 3 with the late rollbacks costs more a
// seed; every planted patch the simulation catches is caught within seeds 1…200 and 421…500
// (docs/RELIABILITY.md); `npm run mutation:defects` runs seeds 1…600.
describe("the deterministic campaign simulation, seeds 1…200", () => {
  seedCases(1, 200, 650);
});
