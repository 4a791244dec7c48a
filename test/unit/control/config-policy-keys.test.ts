/**
 * Unknown keys under `policy` are refused, naming the key (engine review R02): SPEC §10 names
 * `policy.domains` (failure-domain budgets), which no code enforces; a config that set it
 * loaded without a word, so an operator believed a domain budget held while the engine offered
 * a whole domain at once. Every other unknown key was already refused ("X: unknown setting").
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../control/config.js";

function configFile(content: unknown): string {
  const file = join(mkdtempSync(join(tmpdir(), "policy-keys-")), "control.json");
  writeFileSync(file, JSON.stringify(content));
  return file;
}

describe("policy settings", () => {
  it("refuses policy.domains, naming it and saying domain budgets are not built", () => {
    const file = configFile({ policy: { domains: [{ label: "rack", max: 1 }] } });
    expect(() => loadConfig({ file, env: {} })).toThrow(
      /policy\.domains: unknown setting \(failure-domain budgets are not built yet\)/,
    );
  });

  it("refuses any other unknown key under policy, naming it", () => {
    const file = configFile({ policy: { maxBatches: 5, maxBatchs: 3 } });
    expect(() => loadConfig({ file, env: {} })).toThrow(/policy\.maxBatchs: unknown setting/);
  });

  it("loads the known policy settings", () => {
    const file = configFile({
      policy: { minBatchDurationSeconds: 60, firstBatchMaxPercent: 10, maxBatches: 4 },
    });
    expect(loadConfig({ file, env: {} }).policy).toEqual({
      minBatchDurationSeconds: 60,
      firstBatchMaxPercent: 10,
      maxBatches: 4,
    });
  });
});
