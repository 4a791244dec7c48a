// Prints "N passed, N failed[, N skipped]" from vitest's JSON report. A test file that
// failed without any failed test (it did not load, or a hook failed) counts as one failure.
import { readFileSync } from "node:fs";

const file = process.argv[2];
let report;
try {
  report = JSON.parse(readFileSync(file, "utf8"));
} catch (error) {
  console.error(`no vitest report at ${file}: ${error.message}`);
  console.log("0 passed, 1 failed");
  process.exit(1);
}
const passed = report.numPassedTests ?? 0;
let failed = report.numFailedTests ?? 0;
for (const result of report.testResults ?? []) {
  const failedTests = (result.assertionResults ?? []).filter((t) => t.status === "failed");
  if (result.status === "failed" && failedTests.length === 0) {
    console.error(
      `test file failed without a failed test: ${result.name}: ${result.message ?? ""}`,
    );
    failed += 1;
  }
}
const skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}`);
