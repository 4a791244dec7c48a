import { defineConfig } from "vitest/config";

/**
 * The tests a mutation run (`npm run mutation`) runs against each mutant: the unit tests and
 * the first 50 simulation seeds, all pure (no PostgreSQL, so no global setup).
 */
export default defineConfig({
  test: {
    include: ["test/unit/**/*.test.ts", "test/simulation/*.mutation.ts"],
    exclude: ["**/node_modules/**"],
    testTimeout: 60_000,
    pool: "forks",
    reporters: ["default"],
  },
});
