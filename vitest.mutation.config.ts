import { defineConfig } from "vitest/config";

/**
 * The tests a mutation run (`npm run mutation`) runs against each mutant: the engine's unit
 * tests (`test/unit/campaign/`, what `control/campaign/` is mutated for) and the first 50
 * simulation seeds, all pure (no PostgreSQL, so no global setup). The other unit tests read
 * no rule of the engine, and those that validate Control's config fail in Stryker's sandbox
 * (mode 0700) when run as root.
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
        : ["test/unit/campaign/**/*.test.ts", "test/simulation/*.mutation.ts"],
    // The 150,000-node scale test checks the stack, not a rule: it would only slow each mutant.
    // The gate-host config test validates a data dir, which the sandbox fails as root.
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
