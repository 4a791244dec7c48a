import { defineConfig } from "vitest/config";

/**
 * The tests a mutation run (`npm run mutation`) runs against each mutant: the unit tests and
 * the first 50 simulation seeds, all pure (no PostgreSQL, so no global setup).
 * `MUTATION_TESTS` (comma-separated globs) narrows them for a quicker run on one file, e.g.
 * `MUTATION_TESTS='test/unit/campaign/*window*.test.ts'`; its score then says only what those
 * tests catch.
 */
const narrowed = process.env.MUTATION_TESTS?.split(",").filter((g) => g.trim() !== "");

export default defineConfig({
  test: {
    include:
      narrowed !== undefined && narrowed.length > 0
        ? narrowed
        : ["test/unit/**/*.test.ts", "test/simulation/*.mutation.ts"],
    // The 150,000-node scale test checks the stack, not a rule: it would only slow each mutant.
    // The gate-host config test validates a data dir, which Stryker's sandbox (mode 0700) fails
    // as root; it reads no rule of the engine.
    exclude: [
      "**/node_modules/**",
      "test/unit/campaign/fleet-scale.test.ts",
      "test/unit/campaign/gate-hosts.test.ts",
    ],
    testTimeout: 120_000,
    pool: "forks",
    reporters: ["default"],
  },
});
