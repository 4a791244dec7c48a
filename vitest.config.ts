import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The quick benchmark measures ratios on a shared two-core machine; `npm run test:bench`
    // runs it (CI runs it as its own step, after the tests).
    exclude: [
      "**/node_modules/**",
      ...(process.env.AGENT_CONTROL_BENCH_TESTS ? [] : ["test/bench/**"]),
    ],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    globalSetup: ["test/helpers/global-setup.ts"],
    pool: "forks",
    fileParallelism: true,
    maxWorkers: 2,
    reporters: ["default"],
  },
});
