// Mutation testing of the campaign engine: `npm run mutation`, or one file at a time with
// `npm run mutation -- --mutate control/campaign/windows.ts`, `--incremental` to reuse the last
// results. Reports under reports/mutation/ (ignored by git); not part of `npm test`.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: "vitest",
  vitest: { configFile: "vitest.mutation.config.ts" },
  plugins: ["@stryker-mutator/vitest-runner"],
  mutate: ["control/campaign/**/*.ts"],
  coverageAnalysis: "perTest",
  reporters: ["html", "json", "clear-text", "progress"],
  htmlReporter: { fileName: "reports/mutation/index.html" },
  jsonReporter: { fileName: "reports/mutation/mutation.json" },
  incrementalFile: "reports/mutation/stryker-incremental.json",
  tempDirName: ".stryker-tmp",
  concurrency: 2,
  timeoutMS: 10_000,
  dryRunTimeoutMinutes: 30,
  thresholds: { high: 90, low: 80, break: null },
};
