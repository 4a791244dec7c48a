/**
 * Runs the real `promtool test rules` over docs/monitoring/alerts.yml with the given unit tests
 * (synthetic input series and the alerts expected at given times), in a temporary file.
 * @returns promtool's stdout (it contains "SUCCESS" when every test held; it exits non-zero,
 *   which rejects, when one did not)
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";

/** The shipped alert rules. */
export const ALERTS = resolve("docs/monitoring/alerts.yml");

export async function promtoolTestRules(tests: readonly unknown[]): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "alert-test-"));
  try {
    const file = join(dir, "test.yml");
    await writeFile(
      file,
      JSON.stringify({ rule_files: [ALERTS], evaluation_interval: "1m", tests }),
    );
    const { stdout } = await promisify(execFile)("/usr/bin/promtool", ["test", "rules", file]);
    return stdout;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
